package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Config is the set of directives of one node. See the package comment for
// its concurrency rules.
type Config struct {
	dirs   []*directive          // table order
	byName map[string]*directive // lower-case name or alias → directive; read-only after New
	all    []string              // every name and alias, sorted

	writeMu sync.Mutex   // serialises Set and the Load functions (and their hooks)
	valMu   sync.RWMutex // Get against publishing a batch of new values
	hookMu  sync.RWMutex // the hook slices

	resetHooks []func()
	chdir      atomic.Bool
	file       atomic.Pointer[string]

	// users are the user directives' words (after "user"), in order; not
	// a CONFIG GET parameter (users.go).
	users       atomic.Pointer[[][]string]
	userRewrite atomic.Pointer[func() []string]
}

// New returns a Config with every directive at its default. dir defaults to
// the process's working directory.
func New() *Config {
	c := &Config{byName: map[string]*directive{}}
	c.dirs = directives()
	for _, d := range c.dirs {
		for _, n := range append([]string{d.name}, d.aliases...) {
			if _, dup := c.byName[n]; dup {
				panic("config: directive registered twice: " + n)
			}
			c.byName[n] = d
			c.all = append(c.all, n)
		}
		if d.name == "dir" {
			wd, _ := os.Getwd()
			d.cur.Store(&value{s: wd})
			continue
		}
		v, reason := d.parse(d.initialWords(), &value{}, false)
		if reason != "" {
			panic(fmt.Sprintf("config: bad default for %s: %q: %s", d.name, d.def, reason))
		}
		d.cur.Store(v)
	}
	sort.Strings(c.all)
	return c
}

// initialWords are the words of the default value.
func (d *directive) initialWords() []string {
	if d.has(multi) {
		if w, ok := SplitArgs(d.def); ok && len(w) > 0 {
			return w
		}
	}
	return []string{d.def}
}

// lookup finds a directive by name or alias, case-insensitively.
func (c *Config) lookup(name string) (*directive, bool) {
	d, ok := c.byName[name]
	if !ok {
		d, ok = c.byName[strings.ToLower(name)]
	}
	return d, ok
}

func (c *Config) must(name string) *directive {
	d, ok := c.lookup(name)
	if !ok {
		panic("config: unknown directive " + name)
	}
	return d
}

// ---- typed accessors (lock-free)

// String returns the directive's value as CONFIG GET shows it. name may be
// an alias and is case-insensitive; an unknown name panics (it is a
// programming error).
func (c *Config) String(name string) string { return c.must(name).cur.Load().s }

// Int returns an int directive's value (memory directives in bytes). For a
// bool it is 0 or 1, for an enum the position of the value in the
// directive's list (loglevel: debug 0 ... nothing 4), for
// notify-keyspace-events the Notify* flags, for save and bind the number of
// entries, for replicaof the port; other directives give 0. An unknown name
// panics.
func (c *Config) Int(name string) int64 { return c.must(name).cur.Load().n }

// Bool reports whether a bool directive is "yes" (for other kinds: Int != 0).
// An unknown name panics.
func (c *Config) Bool(name string) bool { return c.must(name).cur.Load().n != 0 }

// List returns the directive's value split on spaces (bind, trace-actors,
// save, ...).
func (c *Config) List(name string) []string { return strings.Fields(c.String(name)) }

// SaveParams returns the save points.
func (c *Config) SaveParams() []SaveParam {
	p, _ := c.must("save").cur.Load().x.([]SaveParam)
	return append([]SaveParam(nil), p...)
}

// ClientOutputBufferLimits returns client-output-buffer-limit.
func (c *Config) ClientOutputBufferLimits() ClientBufferLimits {
	l, _ := c.must("client-output-buffer-limit").cur.Load().x.(ClientBufferLimits)
	return l
}

// Var is a handle on one directive for hot paths: it skips the name lookup.
type Var struct{ d *directive }

// Var returns a handle on the named directive (panics on an unknown name).
func (c *Config) Var(name string) Var { return Var{c.must(name)} }

// Name is the directive's canonical name.
func (v Var) Name() string { return v.d.name }

// String is like Config.String.
func (v Var) String() string { return v.d.cur.Load().s }

// Int is like Config.Int.
func (v Var) Int() int64 { return v.d.cur.Load().n }

// Bool is like Config.Bool.
func (v Var) Bool() bool { return v.d.cur.Load().n != 0 }

// ---- registry queries

// Names returns the canonical names of every directive, sorted (aliases
// are not included; Get("*") does include them).
func (c *Config) Names() []string {
	out := make([]string, 0, len(c.dirs))
	for _, d := range c.dirs {
		out = append(out, d.name)
	}
	sort.Strings(out)
	return out
}

// Canonical returns the canonical name of a directive or alias
// (case-insensitive), and whether it exists.
func (c *Config) Canonical(name string) (string, bool) {
	d, ok := c.lookup(name)
	if !ok {
		return "", false
	}
	return d.name, true
}

// Mutable reports whether CONFIG SET may change the directive (false for
// immutable and unknown directives).
func (c *Config) Mutable(name string) bool {
	d, ok := c.lookup(name)
	return ok && !d.has(immutable)
}

// File returns the absolute path of the config file the last successful
// Load read ("" when none).
func (c *Config) File() string {
	if p := c.file.Load(); p != nil {
		return *p
	}
	return ""
}

// SetChdir makes every later successful load or CONFIG SET of dir also
// change the process's working directory (os.Chdir), as redis-server does.
// It is off by default, so that several Configs can live in one process
// (tests); then dir is only checked to be an existing directory and is
// stored as an absolute path, and users resolve their files against
// String("dir").
func (c *Config) SetChdir(on bool) { c.chdir.Store(on) }

// ---- hooks

// OnChange registers fn to be called with the directive's new value (as
// CONFIG GET shows it) after every successful Set or Load that includes the
// directive (by its name or an alias), whether or not the value changed.
// Callbacks run synchronously, after the new values are visible, in the
// goroutine that called Set/Load, with Set/Load still serialised: they may
// read the Config but must not call Set or a Load function. An unknown
// name panics.
func (c *Config) OnChange(name string, fn func(value string)) {
	d := c.must(name)
	c.hookMu.Lock()
	d.onChange = append(d.onChange, fn)
	c.hookMu.Unlock()
}

// OnApply registers fn to put a new value into effect during CONFIG SET
// (Set), before it is published, like Redis's apply functions (port: listen
// on the new port). It is called only when the value changes. If it returns
// an error, Set fails with
//
//	ERR CONFIG SET failed (possibly related to argument '<name>') - <err>
//
// and the hooks already applied in that Set are called again with their
// old values. Load functions do not call it. The same reentrancy rules as
// OnChange apply. An unknown name panics.
func (c *Config) OnApply(name string, fn func(value string) error) {
	d := c.must(name)
	c.hookMu.Lock()
	d.onApply = append(d.onApply, fn)
	c.hookMu.Unlock()
}

// OnResetStat registers fn to be called by ResetStat.
func (c *Config) OnResetStat(fn func()) {
	c.hookMu.Lock()
	c.resetHooks = append(c.resetHooks, fn)
	c.hookMu.Unlock()
}

// ResetStat runs the OnResetStat hooks (CONFIG RESETSTAT): every component
// keeping INFO statistics registers one.
func (c *Config) ResetStat() {
	c.hookMu.RLock()
	hooks := append([]func(){}, c.resetHooks...)
	c.hookMu.RUnlock()
	for _, fn := range hooks {
		fn()
	}
}

func (c *Config) changeHooks(d *directive) []func(string) {
	c.hookMu.RLock()
	defer c.hookMu.RUnlock()
	return append([]func(string){}, d.onChange...)
}

func (c *Config) applyHooks(d *directive) []func(string) error {
	c.hookMu.RLock()
	defer c.hookMu.RUnlock()
	return append([]func(string) error{}, d.onApply...)
}

// ---- CONFIG GET

// Get answers CONFIG GET: every directive (aliases included) whose name
// matches one of the patterns (Redis glob, case-insensitive; a pattern
// without glob characters is an exact, case-insensitive name), each name
// once, sorted by name, as {name, value} pairs.
func (c *Config) Get(patterns ...string) [][2]string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, p := range patterns {
		if !hasGlob(p) {
			if _, ok := c.byName[strings.ToLower(p)]; ok {
				add(strings.ToLower(p))
			}
			continue
		}
		for _, n := range c.all {
			if !c.byName[n].has(hidden) && globMatch(p, n) {
				add(n)
			}
		}
	}
	sort.Strings(names)
	out := make([][2]string, len(names))
	c.valMu.RLock()
	for i, n := range names {
		out[i] = [2]string{n, c.byName[n].cur.Load().s}
	}
	c.valMu.RUnlock()
	return out
}

// ---- CONFIG SET

// Set answers CONFIG SET name value [name value ...]: either every pair is
// applied or none is. Names are case-insensitive and may be aliases. The
// error texts are Redis 7's:
//
//	ERR Unknown option or number of arguments for CONFIG SET - '<name>'
//	ERR CONFIG SET failed (possibly related to argument '<name>') - can't set immutable config
//	ERR CONFIG SET failed (possibly related to argument '<name>') - duplicate parameter
//	ERR CONFIG SET failed (possibly related to argument '<name>') - <reason>
//
// where reason is e.g. "argument couldn't be parsed into an integer".
// Set may change protected directives (dir, dbfilename); the CONFIG SET of
// a client goes through SetFrom.
func (c *Config) Set(pairs ...[2]string) error { return c.SetFrom(true, pairs...) }

// SetFrom is Set for a client that enable-protected-configs allows to
// change protected directives or not (then Redis 7's "ERR CONFIG SET failed
// (possibly related to argument '<name>') - can't set protected config").
func (c *Config) SetFrom(allowProtected bool, pairs ...[2]string) error {
	if len(pairs) == 0 {
		return errors.New("ERR wrong number of arguments for 'config|set' command")
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()

	type item struct {
		d        *directive
		key      string // registered (lower-case) name used
		old, new *value
	}
	items := make([]item, len(pairs))
	for i, p := range pairs {
		key := strings.ToLower(p[0])
		d, ok := c.byName[key]
		if !ok {
			return fmt.Errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", p[0])
		}
		if d.has(immutable) {
			return setFailed(p[0], "can't set immutable config")
		}
		if d.has(protected) && !allowProtected {
			return setFailed(p[0], "can't set protected config")
		}
		for j := 0; j < i; j++ {
			if items[j].d == d {
				return setFailed(p[0], "duplicate parameter")
			}
		}
		items[i] = item{d: d, key: key, old: d.cur.Load()}
	}
	for i, p := range pairs {
		it := &items[i]
		nv, reason := it.d.parse(it.d.setWords(p[1]), it.old, false)
		if reason != "" {
			return setFailed(it.key, reason)
		}
		it.new = nv
	}

	// Put the changes into effect; undo on failure.
	type undo struct {
		d   *directive
		old *value
		fns []func(string) error
	}
	var undos []undo
	rollback := func() {
		for k := len(undos) - 1; k >= 0; k-- {
			u := undos[k]
			for _, fn := range u.fns {
				_ = fn(u.old.s)
			}
			if u.d.apply != nil {
				_ = u.d.apply(c, u.old)
			}
		}
	}
	for _, it := range items {
		if it.new.s == it.old.s {
			continue
		}
		u := undo{d: it.d, old: it.old}
		if it.d.apply != nil {
			if err := it.d.apply(c, it.new); err != nil {
				rollback()
				return setFailed(it.key, errnoText(err))
			}
		}
		for _, fn := range c.applyHooks(it.d) {
			if err := fn(it.new.s); err != nil {
				undos = append(undos, u)
				rollback()
				return setFailed(it.key, err.Error())
			}
			u.fns = append(u.fns, fn)
		}
		undos = append(undos, u)
	}

	c.valMu.Lock()
	for _, it := range items {
		it.d.cur.Store(it.new)
	}
	c.valMu.Unlock()

	for _, it := range items {
		for _, fn := range c.changeHooks(it.d) {
			fn(it.new.s)
		}
	}
	return nil
}

func setFailed(name, reason string) error {
	return fmt.Errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, reason)
}
