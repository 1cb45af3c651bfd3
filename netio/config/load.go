package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadError is a config file or command line error. Its Error() is a block
// ready to print to stderr before exiting 1, in the style of redis-server:
//
//	*** FATAL CONFIG FILE ERROR (slotd) ***
//	Reading the configuration file 'slotd.conf', at line 3
//	>>> 'port abc'
//	invalid value for 'port': 'abc' - argument couldn't be parsed into an integer
type LoadError struct {
	File      string // config file; "" for the command line
	Line      int    // 1-based line in File; 0 when not about a line
	Text      string // the offending line (command line: the option as a config line)
	Directive string // lower-case directive name, when known
	Msg       string // what is wrong, naming the directive
}

// Error returns the multi-line FATAL CONFIG FILE ERROR block.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("\n*** FATAL CONFIG FILE ERROR (slotd) ***\n")
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "Reading the configuration file '%s', at line %d\n", e.File, e.Line)
	case e.File == "" && e.Text != "":
		b.WriteString("Reading the command line arguments\n")
	}
	if e.Text != "" {
		fmt.Fprintf(&b, ">>> '%s'\n", e.Text)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Summary is a one-line form: "slotd.conf:3: invalid value for 'port': ...".
func (e *LoadError) Summary() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	}
	return "command line: " + e.Msg
}

// maxIncludeDepth bounds nested includes (an include cycle would otherwise
// never end).
const maxIncludeDepth = 16

// loader stages the directives of one Load call; nothing is published
// unless the whole call succeeds.
type loader struct {
	c      *Config
	staged map[*directive]*value
	order  []*directive // first-appearance order, for OnChange
	// saveSeen: a save line was loaded; later ones add their points to it
	// (the first replaces the defaults), across the file and the command
	// line alike, as Redis 7.0 (config.c's save_loaded).
	saveSeen bool
	depth    int
	users    [][]string // user directives (users.go)
	// chdir bookkeeping, to undo a dir change if the load fails
	chdirDone bool
	origWD    string
}

func (c *Config) newLoader() *loader {
	return &loader{c: c, staged: map[*directive]*value{}}
}

func (ld *loader) current(d *directive) *value {
	if v, ok := ld.staged[d]; ok {
		return v
	}
	return d.cur.Load()
}

// directive applies one directive line. It returns the reason for a failure
// of this line, or a nested error (from an included file).
func (ld *loader) directive(name string, words []string) (msg string, nested error) {
	key := strings.ToLower(name)
	if key == "include" {
		if len(words) != 1 {
			return "wrong number of arguments for 'include'", nil
		}
		return "", ld.include(words[0])
	}
	if key == "user" {
		return ld.user(words), nil
	}
	d, ok := ld.c.byName[key]
	if !ok {
		if deprecated[key] && len(words) == 1 {
			return "", nil
		}
		return fmt.Sprintf("unknown directive '%s'", name), nil
	}
	if !d.has(multi) && len(words) != 1 {
		return fmt.Sprintf("wrong number of arguments for '%s'", key), nil
	}
	shown := strings.Join(words, " ")
	if d.has(multi) && len(words) == 1 && words[0] != "" {
		split, ok := SplitArgs(words[0])
		if !ok {
			return fmt.Sprintf("invalid value for '%s': '%s' - Unbalanced quotes in configuration line", key, shown), nil
		}
		words = split
	}
	accumulate := d.name == "save" && ld.saveSeen
	nv, reason := d.parse(words, ld.current(d), accumulate)
	if reason != "" {
		return fmt.Sprintf("invalid value for '%s': '%s' - %s", key, shown, reason), nil
	}
	if d.name == "save" {
		ld.saveSeen = true
	}
	if d.apply != nil {
		if !ld.chdirDone && ld.c.chdir.Load() {
			ld.origWD, _ = os.Getwd()
			ld.chdirDone = true
		}
		if err := d.apply(ld.c, nv); err != nil {
			return fmt.Sprintf("invalid value for '%s': '%s' - %s", key, shown, errnoText(err)), nil
		}
	}
	if _, seen := ld.staged[d]; !seen {
		ld.order = append(ld.order, d)
	}
	ld.staged[d] = nv
	return "", nil
}

// include loads a file named by an include directive; a name with glob
// characters loads every match (none is fine), as Redis 7 does.
func (ld *loader) include(pattern string) error {
	if !strings.ContainsAny(pattern, "*?[") {
		return ld.loadFile(pattern)
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return &LoadError{File: pattern, Msg: fmt.Sprintf("bad include pattern '%s': %v", pattern, err)}
	}
	for _, m := range matches {
		if err := ld.loadFile(m); err != nil {
			return err
		}
	}
	return nil
}

func (ld *loader) loadFile(path string) error {
	if ld.depth >= maxIncludeDepth {
		return &LoadError{File: path, Msg: fmt.Sprintf("include nesting too deep (more than %d levels) at '%s'", maxIncludeDepth, path)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return &LoadError{File: path, Msg: fmt.Sprintf("can't open config file '%s': %s", path, errnoText(err))}
	}
	ld.depth++
	defer func() { ld.depth-- }()
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.Trim(raw, " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(directive, msg string) error {
			return &LoadError{File: path, Line: i + 1, Text: line, Directive: directive, Msg: msg}
		}
		words, ok := SplitArgs(line)
		if !ok {
			return fail("", "Unbalanced quotes in configuration line")
		}
		if len(words) == 0 {
			continue
		}
		msg, nested := ld.directive(words[0], words[1:])
		if nested != nil {
			return nested
		}
		if msg != "" {
			return fail(strings.ToLower(words[0]), msg)
		}
	}
	return nil
}

// finish checks cross-directive rules, then publishes the staged values and
// runs the OnChange hooks.
func (ld *loader) finish() error {
	if ld.current(ld.c.byName["cluster-enabled"]).n != 0 && ld.current(ld.c.byName["replicaof"]).s != "" {
		return &LoadError{Directive: "replicaof", Msg: "replicaof directive not allowed in cluster mode"}
	}
	c := ld.c
	c.valMu.Lock()
	for _, d := range ld.order {
		d.cur.Store(ld.staged[d])
	}
	c.valMu.Unlock()
	if ld.users != nil {
		c.users.Store(&ld.users)
	}
	for _, d := range ld.order {
		for _, fn := range c.changeHooks(d) {
			fn(ld.staged[d].s)
		}
	}
	return nil
}

// undo reverts side effects of a failed load.
func (ld *loader) undo() {
	if ld.chdirDone && ld.origWD != "" {
		_ = os.Chdir(ld.origWD)
	}
}

// LoadFile loads a redis.conf-syntax file: one directive per line, '#'
// comment lines, blank lines, SplitArgs quoting, repeated directives (the
// last wins; repeated save lines add up, as in Redis), "include path"
// (relative paths are relative to the working directory; globs allowed).
// Nothing is applied unless the whole file loads.
func (c *Config) LoadFile(path string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	ld := c.newLoader()
	abs := absPath(path)
	if err := ld.loadFile(path); err != nil {
		ld.undo()
		return err
	}
	if err := ld.finish(); err != nil {
		ld.undo()
		return err
	}
	c.file.Store(&abs)
	return nil
}

// absPath makes a config file path absolute against the working directory
// before loading it: a dir directive in the file changes that directory
// (with SetChdir), and CONFIG REWRITE must still find the file.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// LoadArgs loads the arguments given to the binary (without argv[0]), as
// redis-server takes them:
//
//	[config-file] [--name value [value ...]] ...
//
// The first argument is a config file unless it starts with "--". Each
// "--name" takes the following arguments up to the next "--..." as its
// words ("--save 900 1", "--save '900 1'", --save "", "--port 7000";
// "--save" with no value means --save ""); the first argument after a
// lone "--name" is its value even when it starts with "--"; "--name value"
// given as one argument is split too. The file is read first, then the
// options in order, so options override the file (--save lines add to the
// file's save points, as Redis 7.0's). Nothing is applied unless everything
// loads.
func (c *Config) LoadArgs(args []string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	ld := c.newLoader()
	file := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "--") {
		file = absPath(args[0])
		err := ld.loadFile(args[0])
		args = args[1:]
		if err != nil {
			ld.undo()
			return err
		}
	}
	for i := 0; i < len(args); {
		a := args[i]
		var name string
		var words []string
		bare := !strings.HasPrefix(a, "--") // only the first: later bare words are values
		if bare {
			// Words before any --name (slotd.conf loglevel verbose) are a
			// config line of their own, as Redis 7.0 takes them.
			name = a
		} else if inline, ok := SplitArgs(a[2:]); ok && len(inline) > 1 {
			name, words = inline[0], inline[1:]
		} else {
			name = a[2:]
		}
		i++
		if !bare && len(words) == 0 && i < len(args) && !strings.EqualFold(name, "save") {
			// A name alone takes the next argument as its value even when
			// it starts with "--" (--port --loglevel: port's value), as
			// Redis 7.0 does; only --save before another option is empty.
			words = append(words, args[i])
			i++
		}
		for i < len(args) && !strings.HasPrefix(args[i], "--") {
			words = append(words, args[i])
			i++
		}
		if len(words) == 0 && strings.EqualFold(name, "save") {
			words = []string{""}
		}
		msg, nested := ld.directive(name, words)
		if nested != nil {
			ld.undo()
			return nested
		}
		if msg != "" {
			ld.undo()
			return &LoadError{Text: optionLine(name, words), Directive: strings.ToLower(name), Msg: msg}
		}
	}
	if err := ld.finish(); err != nil {
		ld.undo()
		return err
	}
	if file != "" {
		c.file.Store(&file)
	}
	return nil
}

// optionLine shows a command line option as the config line Redis would
// have built from it: name "value" ...
func optionLine(name string, words []string) string {
	parts := []string{name}
	for _, w := range words {
		parts = append(parts, quoteArg(w))
	}
	return strings.Join(parts, " ")
}

// FatalMessage formats any Load error for printing before exit(1): a
// *LoadError as its block, anything else in the same frame.
func FatalMessage(err error) string {
	var le *LoadError
	if errors.As(err, &le) {
		return le.Error()
	}
	return (&LoadError{Msg: err.Error()}).Error()
}
