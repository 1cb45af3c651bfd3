// Package command owns the command table: every command's name, arity, flags,
// key positions and where it executes (on the connection's event loop, in the
// shard actor that owns its keys' slot, or fanned out to every shard). The
// packages that implement commands register their specs here at init; the
// table also feeds COMMAND / COMMAND INFO / COMMAND DOCS.
package command

import (
	"sort"
	"strings"
	"sync"

	"github.com/slotd/slotd/netio/resp"
)

// Exec says where a command runs.
type Exec uint8

const (
	// Loop commands run on the client's event loop (connection state, server
	// info, cluster admin through messages).
	Loop Exec = iota
	// Shard commands run inside the shard actor owning the slot of their keys
	// (or the slot chosen by Route).
	Shard
	// Fanout commands run on every shard actor; the loop merges the parts.
	Fanout
)

// Spec describes one command (or one subcommand when Parent is set).
type Spec struct {
	Name       string // lower case; subcommands "parent|sub"
	Arity      int    // Redis convention: negative means "at least -Arity"
	Flags      []string
	First      int // first key index (0: no keys)
	Last       int // last key index; negative counts from the end
	Step       int
	Categories []string // ACL categories without '@'
	Tips       []string
	Group      string // COMMAND DOCS group
	Summary    string
	Since      string
	Exec       Exec

	// Keys overrides First/Last/Step for commands whose key positions depend
	// on their arguments (numkeys forms). It returns the argument indexes.
	Keys func(args [][]byte) ([]int, error)
	// Route picks the slot for shard commands that have no keys (SCAN cursor,
	// CLUSTER COUNTKEYSINSLOT). ok=false sends the error text as the reply.
	Route func(args [][]byte) (slot int, errMsg string)

	// Merge combines the fanout parts (one per shard, in shard order) of a
	// Fanout command into its reply.
	Merge Merge

	Subcommands map[string]*Spec
	Parent      *Spec
	ID          int

	// TxControl commands run at once inside MULTI instead of being queued
	// (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET).
	TxControl bool
	// WatchCmd marks WATCH: the shard records the client's watch state.
	WatchCmd bool
	// Barrier loop commands change state the shards read (script cache,
	// configuration): they wait until the connection's earlier commands
	// have run in their shards, so a pipeline sees them in order.
	Barrier bool
	// ScriptCache marks shard commands that read or add to the node's
	// script cache (EVAL, EVALSHA...): a pipeline runs them in order even
	// when they go to different shard actors.
	ScriptCache bool
	// Isolated marks shard commands that read other shard actors' state
	// (SCAN's walk reads their slot counts): in a pipeline they run with
	// none of the connection's other commands in flight.
	Isolated bool
	// ActorKeys marks shard commands that reach keys of any slot of the
	// shard actor running them (SORT's STORE destination and pattern
	// keys): outside cluster mode, keys of different slots that one actor
	// serves do not make them CROSSSLOT; they run in their first key's slot.
	ActorKeys bool
	// ArgError returns the argument error a command reports before it
	// looks at any key ("" if none): a node not in cluster mode answers it
	// instead of CROSSSLOT, as Redis with one keyspace would.
	ArgError func(args [][]byte) string
	// WriteFor decides, for commands whose arguments say whether they
	// write (EVAL of a script whose shebang declares its flags), what
	// Write would: Redis's getCommandFlags. Nil: the write flag.
	WriteFor func(args [][]byte) bool
	// RunTimed marks commands that Redis's docs give as O(1) but its table
	// does not flag fast, because they take options (SET, SETEX, PSETEX): a
	// shard times them in runs like fast commands when their arguments are
	// small (engine.exec), so a pipeline of SETs reads the clock once.
	RunTimed bool

	bound                                                              bool // Bind
	write, readonly, noscript, pubsub, loading, stale, admin, multiKey bool
	blocking, allowBusy, noAuth, denyOOM, fast                         bool
}

// Merge combines the parts a Fanout command's shards left (one per shard,
// in shard order) into the command's reply.
type Merge func(w *resp.Writer, args [][]byte, parts []any)

// Blocking reports the blocking flag (cached: checked on the hot path).
func (s *Spec) Blocking() bool { return s.blocking }

// AllowBusy reports the allow_busy flag (cached).
func (s *Spec) AllowBusy() bool { return s.allowBusy }

// DenyOOM reports the denyoom flag (cached): refused while memory is over
// maxmemory and nothing can be evicted.
func (s *Spec) DenyOOM() bool { return s.denyOOM }

// Fast reports the fast flag (cached): Redis's O(1) and O(log N)
// commands, whose time a shard measures per run of them (engine.exec).
func (s *Spec) Fast() bool { return s.fast }

// NoAuth reports the no_auth flag (cached).
func (s *Spec) NoAuth() bool { return s.noAuth }

// Is reports whether the spec carries flag f ("write", "readonly", ...).
func (s *Spec) Is(f string) bool {
	for _, x := range s.Flags {
		if x == f {
			return true
		}
	}
	return false
}

// Stale reports the stale flag (cached): allowed on a replica whose link
// is down with replica-serve-stale-data no.
func (s *Spec) Stale() bool { return s.stale }

// Loading reports the loading flag (cached): allowed while loading.
func (s *Spec) Loading() bool { return s.loading }

// Write reports the write flag (cached).
func (s *Spec) Write() bool { return s.write }

// WritesWith reports whether this call of the command counts as a write
// for routing and the replica rules: WriteFor when set, else Write.
func (s *Spec) WritesWith(args [][]byte) bool {
	if s.WriteFor != nil {
		return s.WriteFor(args)
	}
	return s.write
}

// ReadOnly reports the readonly flag (cached).
func (s *Spec) ReadOnly() bool { return s.readonly }

// Admin reports the admin flag.
func (s *Spec) Admin() bool { return s.admin }

// FullName is "parent|sub" for subcommands, else Name.
func (s *Spec) FullName() string { return s.Name }

// ArityOK reports whether n arguments (command name included) satisfy Arity.
func (s *Spec) ArityOK(n int) bool {
	if s.Arity >= 0 {
		return n == s.Arity
	}
	return n >= -s.Arity
}

// KeyIndexes returns the argument indexes holding keys, appended to dst.
func (s *Spec) KeyIndexes(dst []int, args [][]byte) ([]int, error) {
	if s.Keys != nil {
		idx, err := s.Keys(args)
		return append(dst, idx...), err
	}
	if s.First <= 0 || s.First >= len(args) {
		return dst, nil
	}
	last := s.Last
	if last < 0 {
		last = len(args) + last
	}
	if last >= len(args) {
		last = len(args) - 1
	}
	step := s.Step
	if step <= 0 {
		step = 1
	}
	for i := s.First; i <= last; i += step {
		dst = append(dst, i)
	}
	return dst, nil
}

var (
	mu    sync.Mutex
	table = map[string]*Spec{}
	all   = []*Spec{nil} // by ID; IDs start at 1
)

// Register adds specs to the table (called from init functions).
func Register(specs ...*Spec) {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range specs {
		register(s, nil)
	}
}

func register(s *Spec, parent *Spec) {
	s.Name = strings.ToLower(s.Name)
	s.Parent = parent
	index(s)
	if parent == nil {
		if _, dup := table[s.Name]; dup {
			panic("command registered twice: " + s.Name)
		}
		table[s.Name] = s
	}
	for name, sub := range s.Subcommands {
		if sub.Name == "" {
			sub.Name = s.Name + "|" + strings.ToLower(name)
		}
		if sub.Exec == Loop && s.Exec != Loop && !sub.bound {
			sub.Exec = s.Exec
		}
		register(sub, s)
	}
}

// index caches s's flags and gives it its ID.
func index(s *Spec) {
	for _, f := range s.Flags {
		switch f {
		case "write":
			s.write = true
		case "readonly":
			s.readonly = true
		case "noscript":
			s.noscript = true
		case "pubsub":
			s.pubsub = true
		case "loading":
			s.loading = true
		case "stale":
			s.stale = true
		case "admin":
			s.admin = true
		case "blocking":
			s.blocking = true
		case "allow_busy":
			s.allowBusy = true
		case "no_auth":
			s.noAuth = true
		case "denyoom":
			s.denyOOM = true
		case "fast":
			s.fast = true
		}
	}
	if s.ID == 0 {
		s.ID = len(all)
		all = append(all, s)
	}
}

// Bind records that s has an implementation (the executing layer keeps it,
// typed, in its own table indexed by s.ID: actors/engine.Handle for shard
// and fanout commands, netio.Loop for loop commands) and returns s's ID,
// assigning it now if s is not registered yet.
func Bind(s *Spec) int {
	mu.Lock()
	defer mu.Unlock()
	s.bound = true
	if s.ID == 0 {
		s.ID = len(all)
		all = append(all, s)
	}
	return s.ID
}

// Bound reports whether s has an implementation (a container such as
// CLUSTER or OBJECT has none of its own: its subcommands do).
func (s *Spec) Bound() bool { return s.bound }

// AddSubcommand attaches sub to an already registered parent (so a package
// can contribute e.g. CLUSTER COUNTKEYSINSLOT to the CLUSTER container owned
// by another package).
func AddSubcommand(parent string, name string, sub *Spec) {
	mu.Lock()
	defer mu.Unlock()
	p := table[parent]
	if p == nil {
		panic("no parent command " + parent)
	}
	if p.Subcommands == nil {
		p.Subcommands = map[string]*Spec{}
	}
	sub.Name = parent + "|" + strings.ToLower(name)
	p.Subcommands[strings.ToLower(name)] = sub
	register(sub, p)
}

// Lookup finds a top-level command by name, case-insensitively, without
// allocating for names already in lower case or short names.
func Lookup(name []byte) *Spec {
	var buf [32]byte
	if len(name) > len(buf) {
		return table[strings.ToLower(string(name))]
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return table[string(buf[:len(name)])]
}

// LookupFullName finds a command or subcommand by its full name as COMMAND
// DOCS and LATENCY HISTOGRAM take it ("get", "config|set"); nil if none.
func LookupFullName(name string) *Spec {
	parent, sub, ok := strings.Cut(name, "|")
	c := Lookup([]byte(parent))
	if c == nil || !ok {
		return c
	}
	return c.Sub([]byte(sub))
}

// Sub finds a subcommand of s by name (case-insensitive).
func (s *Spec) Sub(name []byte) *Spec {
	if s.Subcommands == nil {
		return nil
	}
	return s.Subcommands[strings.ToLower(string(name))]
}

// All returns every top-level command sorted by name.
func All() []*Spec {
	mu.Lock()
	defer mu.Unlock()
	out := make([]*Spec, 0, len(table))
	for _, s := range table {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MarkBarrier sets Barrier on the named commands ("script|load", ...);
// unknown names are ignored.
func MarkBarrier(names ...string) {
	mu.Lock()
	defer mu.Unlock()
	for _, n := range names {
		for _, s := range all {
			if s != nil && s.Name == n {
				s.Barrier = true
			}
		}
	}
}

// ByID returns the spec with the given ID.
func ByID(id int) *Spec { return all[id] }

// Count is one more than the highest spec ID (specs including
// subcommands; ID 0 is none).
func Count() int { return len(all) }

var internal = map[string]*Spec{}

// RegisterInternal adds a spec that is not a command of its own but a part
// another layer runs (DEBUG DIGEST's fanout, for netio's DEBUG): it gets an
// ID, and Internal finds it by name; COMMAND does not list it.
func RegisterInternal(name string, s *Spec) {
	mu.Lock()
	defer mu.Unlock()
	s.Name = strings.ToLower(s.Name)
	index(s)
	internal[name] = s
}

// Internal returns the spec RegisterInternal added under name (nil if none).
func Internal(name string) *Spec {
	mu.Lock()
	defer mu.Unlock()
	return internal[name]
}
