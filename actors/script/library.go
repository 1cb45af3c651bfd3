package script

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/slots"
)

// Redis functions (FUNCTION LOAD, FCALL): a library is Lua code with a
// "#!lua name=<lib>" first line whose body, run once at load time, calls
// redis.register_function for each function it provides. The node's
// Libraries registry keeps the libraries (immutable values, replaced as a
// whole); each shard's VM runs a library's body again the first time it
// calls one of its functions, to get its own closures (see
// vm_function.go).

// libChunkName is what Redis names library chunks ("@user_function").
const libChunkName = "user_function"

// loadTimeout bounds a library body's run at FUNCTION LOAD (Redis's
// LOAD_TIMEOUT_MS): it should only register functions.
const loadTimeout = 500 * time.Millisecond

// Library is one loaded library. It never changes once registered.
type Library struct {
	Name  string
	Code  string // as given to FUNCTION LOAD, shebang included
	Proto *lua.FunctionProto
	Funcs []*Function // in the order the body registered them
}

// Function is one function of a library.
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	Flags   Flags
	Lib     *Library
}

// libSet is one immutable state of the registry.
type libSet struct {
	libs  map[string]*Library
	funcs map[string]*Function
}

// Libraries is a node's function registry. Lookups are lock-free (an
// immutable set behind an atomic pointer); changes are serialised and run
// library bodies in a VM of the registry's own.
type Libraries struct {
	cur atomic.Pointer[libSet]
	gen atomic.Uint64 // counts changes
	mu  sync.Mutex
	vm  *VM // runs bodies at load time; guarded by mu
	// Changed, if set, is called after every change (under mu).
	Changed func()
}

// NewLibraries returns an empty registry.
func NewLibraries() *Libraries {
	l := &Libraries{}
	l.cur.Store(&libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}})
	return l
}

// Function returns the named function (case-sensitive, as in Redis), or
// nil.
func (l *Libraries) Function(name []byte) *Function { return l.cur.Load().funcs[string(name)] }

// Counts are the number of libraries and functions (FUNCTION STATS).
func (l *Libraries) Counts() (libs, funcs int) {
	s := l.cur.Load()
	return len(s.libs), len(s.funcs)
}

// List returns the libraries whose name matches pattern (Redis glob,
// case-insensitive), sorted by name.
func (l *Libraries) List(pattern string) []*Library {
	s := l.cur.Load()
	out := make([]*Library, 0, len(s.libs))
	for _, lib := range s.libs {
		if slots.MatchString(pattern, lib.Name, true) {
			out = append(out, lib)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Load is FUNCTION LOAD [REPLACE] code: it returns the library's name, or
// the error reply (without "ERR ").
func (l *Libraries) Load(code string, replace bool) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lib, err := l.compile(code, loadTimeout)
	if err != nil {
		return "", err
	}
	next, err := join(l.cur.Load(), []*Library{lib}, replace)
	if err != nil {
		return "", err
	}
	l.publish(next)
	return lib.Name, nil
}

// Delete is FUNCTION DELETE: false when there is no such library.
func (l *Libraries) Delete(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.cur.Load()
	if cur.libs[name] == nil {
		return false
	}
	next := &libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
	for n, lib := range cur.libs {
		if n != name {
			next.add(lib)
		}
	}
	l.publish(next)
	return true
}

// Flush is FUNCTION FLUSH.
func (l *Libraries) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.publish(&libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}})
}

// Restore policies of FUNCTION RESTORE.
const (
	RestoreAppend = iota
	RestoreReplace
	RestoreFlush
)

// Add loads several libraries at once (FUNCTION RESTORE, a snapshot):
// either all of them are added, by policy, or none.
func (l *Libraries) Add(codes []string, policy int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	libs := make([]*Library, 0, len(codes))
	fresh := &libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
	for _, code := range codes {
		lib, err := l.compile(code, 0)
		if err != nil {
			return err
		}
		// The payload itself must not repeat a name.
		if _, err := join(fresh, []*Library{lib}, false); err != nil {
			return err
		}
		fresh.add(lib)
		libs = append(libs, lib)
	}
	base := l.cur.Load()
	if policy == RestoreFlush {
		base = &libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
	}
	next, err := join(base, libs, policy == RestoreReplace)
	if err != nil {
		return err
	}
	l.publish(next)
	return nil
}

// Gen counts the registry's changes: a VM whose libraries were current at
// another generation may hold closures of libraries since removed.
func (l *Libraries) Gen() uint64 { return l.gen.Load() }

// Loaded reports whether lib is one of the current libraries.
func (l *Libraries) Loaded(lib *Library) bool { return l.cur.Load().libs[lib.Name] == lib }

func (l *Libraries) publish(s *libSet) {
	l.cur.Store(s)
	l.gen.Add(1)
	if l.Changed != nil {
		l.Changed()
	}
}

func (s *libSet) add(lib *Library) {
	s.libs[lib.Name] = lib
	for _, f := range lib.Funcs {
		s.funcs[f.Name] = f
	}
}

// join returns base plus libs: a library of the same name as one in base
// is an error unless replace (then it takes the old one's place); a
// function name used by another library is always an error.
func join(base *libSet, libs []*Library, replace bool) (*libSet, error) {
	next := &libSet{libs: map[string]*Library{}, funcs: map[string]*Function{}}
	for _, lib := range libs {
		if base.libs[lib.Name] != nil && !replace {
			return nil, fmt.Errorf("Library '%s' already exists", lib.Name)
		}
	}
	for n, lib := range base.libs {
		if !replaced(n, libs) {
			next.add(lib)
		}
	}
	for _, lib := range libs {
		for _, f := range lib.Funcs {
			if next.funcs[f.Name] != nil {
				return nil, fmt.Errorf("Function %s already exists", f.Name)
			}
		}
		next.add(lib)
	}
	return next, nil
}

func replaced(name string, libs []*Library) bool {
	for _, lib := range libs {
		if lib.Name == name {
			return true
		}
	}
	return false
}

// ParseLibraryHeader splits a library's "#!<engine> name=<lib>" first line
// from its body (the body keeps the newline, so line numbers count the
// header), with Redis's errors.
func ParseLibraryHeader(code string) (name, engine, body string, err error) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", "", fmt.Errorf("Missing library metadata")
	}
	nl := strings.IndexByte(code, '\n')
	if nl < 0 {
		return "", "", "", fmt.Errorf("Invalid library metadata")
	}
	parts, ok := config.SplitArgs(code[:nl])
	if !ok || len(parts) == 0 {
		return "", "", "", fmt.Errorf("Invalid library metadata")
	}
	engine = parts[0][2:]
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return "", "", "", fmt.Errorf("Invalid metadata value, name argument was given multiple times")
			}
			name, named = p[5:], true
			continue
		}
		return "", "", "", fmt.Errorf("Invalid metadata value given: %s", p)
	}
	if !named {
		return "", "", "", fmt.Errorf("Library name was not given")
	}
	return name, engine, code[nl:], nil
}

// validName is Redis's function and library name rule: [A-Za-z0-9_]+.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// compile checks a library's header, compiles its body and runs it once
// (for at most timeout; 0: no limit) to learn its functions.
func (l *Libraries) compile(code string, timeout time.Duration) (*Library, error) {
	name, engine, body, err := ParseLibraryHeader(code)
	if err != nil {
		return nil, err
	}
	if !validName(name) {
		return nil, fmt.Errorf(errBadName)
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, fmt.Errorf("Engine '%s' not found", engine)
	}
	proto, err := compileChunk(body, libChunkName, "Error compiling function: ")
	if err != nil {
		return nil, err
	}
	lib := &Library{Name: name, Code: code, Proto: proto}
	if l.vm == nil || l.vm.Broken() {
		l.vm = NewVM()
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	regs, err := l.vm.runLibrary(ctx, lib)
	if err != nil {
		return nil, err
	}
	if len(regs) == 0 {
		return nil, fmt.Errorf("No functions registered")
	}
	for _, r := range regs {
		lib.Funcs = append(lib.Funcs, r.fn)
	}
	return lib, nil
}

// flagOrder is Redis's order of script flags (FUNCTION LIST).
var flagOrder = []struct {
	f    Flags
	name string
}{{FlagNoWrites, "no-writes"}, {FlagAllowOOM, "allow-oom"}, {FlagAllowStale, "allow-stale"},
	{FlagNoCluster, "no-cluster"}, {FlagAllowCrossSlot, "allow-cross-slot-keys"}}

// FlagList names the flags set in f, in Redis's order.
func FlagList(f Flags) []string {
	var out []string
	for _, x := range flagOrder {
		if f&x.f != 0 {
			out = append(out, x.name)
		}
	}
	return out
}
