package config

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// kind is a directive's value type.
type kind uint8

const (
	kindBool kind = iota
	kindInt
	kindEnum
	kindString
	kindSpecial
)

// dflag holds a directive's properties.
type dflag uint16

const (
	// immutable directives can be loaded but not changed by CONFIG SET.
	immutable dflag = 1 << iota
	// memory ints accept units and print as bytes.
	memory
	// multi directives take several words in a config file / on the
	// command line (save 900 1 300 10); a single non-empty word is split
	// again with SplitArgs, and a CONFIG SET value is split on spaces.
	multi
	// compat directives are accepted and reported for redis.conf
	// compatibility; slotd does not act on them.
	compat
	// hidden directives (Redis's test knobs) answer CONFIG GET only when
	// named exactly, never a glob pattern.
	hidden
	// protected directives (dir, dbfilename: where saves write files) are
	// changed by CONFIG SET only where enable-protected-configs allows it
	// (SetFrom).
	protected
)

// value is one directive's current value.
type value struct {
	s string // the CONFIG GET text
	n int64  // int value; bool 0/1; enum index; notify flags
	x any    // parsed form of special directives
}

// specialParse parses a special directive's words. prev is the value being
// replaced (never nil), accumulate is set for repeated save lines of one
// config source. It returns the new value or a Redis error reason.
type specialParse func(words []string, prev *value, accumulate bool) (*value, string)

type directive struct {
	name    string
	aliases []string
	kind    kind
	flags   dflag
	def     string // default, in any form the parser accepts

	min, max int64             // int bounds
	clamp    func(int64) int64 // int: applied after the bounds check (hz)
	enum     []string          // enum names, lower case
	check    func(string) string
	special  specialParse
	// apply performs a side effect of a new value (dir: chdir); it runs
	// before the value is published and can fail with an errno-like text.
	apply func(c *Config, v *value) error

	cur atomic.Pointer[value]

	onChange []func(string)
	onApply  []func(string) error
}

func (d *directive) has(f dflag) bool { return d.flags&f != 0 }

// parse validates words (already split) and returns the new value or a
// Redis-style reason. Single-word kinds get exactly one word.
func (d *directive) parse(words []string, prev *value, accumulate bool) (*value, string) {
	if d.kind == kindSpecial {
		return d.special(words, prev, accumulate)
	}
	if len(words) != 1 {
		return nil, "wrong number of arguments"
	}
	w := words[0]
	switch d.kind {
	case kindBool:
		switch strings.ToLower(w) {
		case "yes":
			return &value{s: "yes", n: 1}, ""
		case "no":
			return &value{s: "no", n: 0}, ""
		}
		return nil, "argument must be 'yes' or 'no'"
	case kindInt:
		var n int64
		var ok bool
		if d.has(memory) {
			n, ok = ParseMemory(w)
			if !ok {
				return nil, "argument must be a memory value"
			}
		} else {
			n, ok = parseStrictInt(w)
			if !ok {
				return nil, "argument couldn't be parsed into an integer"
			}
		}
		if n < d.min || n > d.max {
			return nil, fmt.Sprintf("argument must be between %d and %d inclusive", d.min, d.max)
		}
		if d.clamp != nil {
			n = d.clamp(n)
		}
		return &value{s: strconv.FormatInt(n, 10), n: n}, ""
	case kindEnum:
		for i, e := range d.enum {
			if strings.EqualFold(e, w) {
				return &value{s: e, n: int64(i)}, ""
			}
		}
		return nil, "argument(s) must be one of the following: " + strings.Join(d.enum, ", ")
	case kindString:
		if d.check != nil {
			if reason := d.check(w); reason != "" {
				return nil, reason
			}
		}
		return &value{s: w}, ""
	}
	return nil, "unsupported directive kind"
}

// setWords turns a CONFIG SET value into the words parse expects.
func (d *directive) setWords(v string) []string {
	if d.has(multi) {
		return strings.Fields(v)
	}
	return []string{v}
}

// constructors used by the directive table

func boolD(name, def string, f dflag, aliases ...string) *directive {
	return &directive{name: name, aliases: aliases, kind: kindBool, flags: f, def: def}
}

func intD(name, def string, min, max int64, f dflag, aliases ...string) *directive {
	return &directive{name: name, aliases: aliases, kind: kindInt, flags: f, def: def, min: min, max: max}
}

func enumD(name, def string, values []string, f dflag, aliases ...string) *directive {
	return &directive{name: name, aliases: aliases, kind: kindEnum, flags: f, def: def, enum: values}
}

func strD(name, def string, f dflag, check func(string) string, aliases ...string) *directive {
	return &directive{name: name, aliases: aliases, kind: kindString, flags: f, def: def, check: check}
}

func specialD(name, def string, f dflag, p specialParse, aliases ...string) *directive {
	return &directive{name: name, aliases: aliases, kind: kindSpecial, flags: f, def: def, special: p}
}
