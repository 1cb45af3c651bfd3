package servercmd

import (
	"sort"
	"strings"

	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// COMMAND and its subcommands, generated from the command table.
func registerCommand() {
	ls := []string{"loading", "stale"}
	cats := []string{"slow", "connection"}
	order := []string{"nondeterministic_output_order"}
	sub := func(arity int, since, summary string, h func(*netio.Ctx), tips ...string) *command.Spec {
		return netio.Loop(&command.Spec{Arity: arity, Flags: ls, Categories: cats, Group: "server", Since: since,
			Summary: summary, Tips: tips}, h)
	}
	command.Register(netio.Loop(&command.Spec{Name: "command", Arity: -1, Flags: ls, Categories: cats, Tips: order,
		Group: "server", Since: "2.8.13", Summary: "Get array of Redis command details",
		Subcommands: map[string]*command.Spec{
			"count": sub(2, "2.8.13", "Get total number of Redis commands", commandCount),
			"info": sub(-2, "2.8.13", "Get array of specific Redis command details, or all when no argument is given.",
				commandInfo, order...),
			"docs":            sub(-2, "7.0.0", "Get array of specific Redis command documentation", commandDocs, order...),
			"list":            sub(-2, "7.0.0", "Get an array of Redis command names", commandList, order...),
			"getkeys":         sub(-4, "2.8.13", "Extract keys given a full Redis command", commandGetKeys),
			"getkeysandflags": sub(-4, "7.0.0", "Extract keys and access flags given a full Redis command", commandGetKeysAndFlags),
			"help":            sub(2, "5.0.0", "Show helpful text about the different subcommands", commandHelp),
		}}, cmdCommand))
}

// reportedFlags are the command flags COMMAND shows, in Redis's order
// (internal ones such as "sentinel" are not shown).
var reportedFlags = []string{"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
	"loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "may_replicate",
	"no_mandatory_keys", "no_async_loading", "no_multi", "allow_busy"}

func commandFlags(s *command.Spec) []string {
	var out []string
	for _, f := range reportedFlags {
		if s.Is(f) {
			out = append(out, f)
		}
	}
	if s.Keys != nil {
		out = append(out, "movablekeys")
	}
	return out
}

// commandCategories adds the categories Redis implies from the flags to
// the declared ones.
func commandCategories(s *command.Spec) []string { return s.CategoryNames() }

// keyRange is the legacy (first, last, step) triple.
func keyRange(s *command.Spec) (first, last, step int) {
	if s.First <= 0 {
		return 0, 0, 0
	}
	step = s.Step
	if step <= 0 {
		step = 1
	}
	return s.First, s.Last, step
}

// notKey: shard channels route like keys but are not keys (SSUBSCRIBE,
// SUNSUBSCRIBE, SPUBLISH).
func notKey(s *command.Spec) bool { return s.Group == "pubsub" && s.First > 0 }

// keySpecFlags are the access flags of the key spec derived from the
// command flags: read-only commands only access, anything else is assumed
// to read and update (what Redis assumes when it cannot tell).
func keySpecFlags(s *command.Spec) []string {
	if notKey(s) {
		return []string{"not_key"}
	}
	if s.Is("readonly") && !s.Is("write") {
		return []string{"RO", "access"}
	}
	return []string{"RW", "access", "update"}
}

func subcommandsSorted(s *command.Spec) []*command.Spec {
	out := make([]*command.Spec, 0, len(s.Subcommands))
	for _, sub := range s.Subcommands {
		out = append(out, sub)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// writeCommandInfo writes one 10-field COMMAND entry.
func writeCommandInfo(w *resp.Writer, s *command.Spec) {
	w.Array(10)
	w.BulkString(s.Name)
	w.Int(int64(s.Arity))
	flags := commandFlags(s)
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	first, last, step := keyRange(s)
	w.Int(int64(first))
	w.Int(int64(last))
	w.Int(int64(step))
	cats := commandCategories(s)
	w.Set(len(cats))
	for _, c := range cats {
		w.Simple("@" + c)
	}
	w.Set(len(s.Tips))
	for _, t := range s.Tips {
		w.BulkString(t)
	}
	if first > 0 {
		w.Set(1)
		w.Map(3)
		w.BulkString("flags")
		kf := keySpecFlags(s)
		w.Set(len(kf))
		for _, f := range kf {
			w.Simple(f)
		}
		w.BulkString("begin_search")
		w.Map(2)
		w.BulkString("type")
		w.BulkString("index")
		w.BulkString("spec")
		w.Map(1)
		w.BulkString("index")
		w.Int(int64(first))
		w.BulkString("find_keys")
		w.Map(2)
		w.BulkString("type")
		w.BulkString("range")
		w.BulkString("spec")
		w.Map(3)
		w.BulkString("lastkey")
		if last >= 0 {
			w.Int(int64(last - first))
		} else {
			w.Int(int64(last))
		}
		w.BulkString("keystep")
		w.Int(int64(step))
		w.BulkString("limit")
		w.Int(0)
	} else {
		w.Set(0)
	}
	if len(s.Subcommands) == 0 {
		w.Set(0)
		return
	}
	subs := subcommandsSorted(s)
	w.Array(len(subs))
	for _, sub := range subs {
		writeCommandInfo(w, sub)
	}
}

// cmdCommand is COMMAND without a subcommand: every command's entry.
func cmdCommand(x *netio.Ctx) {
	if len(x.Args) > 1 {
		x.W.Error("ERR unknown subcommand '" + netio.Trunc(string(x.Args[1]), 128) + "'. Try COMMAND HELP.")
		return
	}
	writeAllCommands(x.W)
}

func writeAllCommands(w *resp.Writer) {
	all := command.All()
	w.Array(len(all))
	for _, s := range all {
		writeCommandInfo(w, s)
	}
}

func commandCount(x *netio.Ctx) { x.W.Int(int64(len(command.All()))) }

func commandInfo(x *netio.Ctx) {
	if len(x.Args) == 2 {
		writeAllCommands(x.W)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, name := range x.Args[2:] {
		if s := command.LookupFullName(string(name)); s != nil {
			writeCommandInfo(x.W, s)
		} else {
			x.W.Null()
		}
	}
}

// writeDocs writes a command's documentation map: summary, since, group and,
// for containers, the subcommands' docs.
func writeDocs(w *resp.Writer, s *command.Spec) {
	group := s.Group
	if group == "" && s.Parent != nil {
		group = s.Parent.Group
	}
	fields := [][2]string{{"summary", s.Summary}, {"since", s.Since}, {"group", group}}
	n := 0
	for _, f := range fields {
		if f[1] != "" {
			n++
		}
	}
	args := docArguments(s)
	if len(s.Subcommands) > 0 || len(args) > 0 {
		n++
	}
	w.Map(n)
	for _, f := range fields {
		if f[1] != "" {
			w.BulkString(f[0])
			w.BulkString(f[1])
		}
	}
	if len(args) > 0 {
		w.BulkString("arguments")
		w.Array(len(args))
		for _, a := range args {
			m := 2
			if a.key {
				m++
			}
			if len(a.flags) > 0 {
				m++
			}
			w.Map(m)
			w.BulkString("name")
			w.BulkString(a.name)
			w.BulkString("type")
			w.BulkString(a.typ)
			if a.key {
				w.BulkString("key_spec_index")
				w.Int(0)
			}
			if len(a.flags) > 0 {
				w.BulkString("flags")
				w.Set(len(a.flags))
				for _, f := range a.flags {
					w.Simple(f)
				}
			}
		}
	}
	if len(s.Subcommands) > 0 {
		w.BulkString("subcommands")
		subs := subcommandsSorted(s)
		w.Map(len(subs))
		for _, sub := range subs {
			w.BulkString(sub.Name)
			writeDocs(w, sub)
		}
	}
}

// docArgument is one COMMAND DOCS argument derived from the command's
// arity and key positions: a key (of COMMAND INFO's one key spec) or a
// string, "multiple" for the last required one of a command that takes
// more, "optional" too when none is required.
type docArgument struct {
	name  string // "key" or "arg"
	typ   string // "key" or "string"
	key   bool
	flags []string
}

// docArguments derives a command's arguments (none for a container: its
// subcommands have them).
func docArguments(s *command.Spec) []docArgument {
	if len(s.Subcommands) > 0 {
		return nil
	}
	base := 1 // the command's name
	if s.Parent != nil {
		base = 2 // and the subcommand's
	}
	n := s.Arity
	if n < 0 {
		n = -n
	}
	first, last, step := keyRange(s)
	isKey := func(p int) bool {
		if first == 0 || notKey(s) || p < first || (p-first)%step != 0 {
			return false
		}
		return last < 0 || p <= last
	}
	arg := func(p int) docArgument {
		if isKey(p) {
			return docArgument{name: "key", typ: "key", key: true}
		}
		return docArgument{name: "arg", typ: "string"}
	}
	var out []docArgument
	for p := base; p < n; p++ {
		out = append(out, arg(p))
	}
	if s.Arity < 0 {
		if len(out) == 0 {
			a := arg(base)
			a.flags = []string{"optional", "multiple"}
			return append(out, a)
		}
		out[len(out)-1].flags = []string{"multiple"}
	}
	return out
}

// commandDocs implements COMMAND DOCS [name ...]: a map of the known names
// (unknown ones are left out).
func commandDocs(x *netio.Ctx) {
	var specs []*command.Spec
	if len(x.Args) == 2 {
		specs = command.All()
	} else {
		for _, name := range x.Args[2:] {
			if s := command.LookupFullName(string(name)); s != nil {
				specs = append(specs, s)
			}
		}
	}
	x.W.Map(len(specs))
	for _, s := range specs {
		x.W.BulkString(s.Name)
		writeDocs(x.W, s)
	}
}

// commandList implements COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p].
func commandList(x *netio.Ctx) {
	var keep func(s *command.Spec) bool
	switch {
	case len(x.Args) == 2:
		keep = func(*command.Spec) bool { return true }
	case len(x.Args) == 5 && netio.ArgIs(x.Args[2], "filterby"):
		val := x.Args[4]
		switch {
		case netio.ArgIs(x.Args[3], "module"):
			keep = func(*command.Spec) bool { return false } // no modules
		case netio.ArgIs(x.Args[3], "aclcat"):
			cat := strings.ToLower(string(val))
			keep = func(s *command.Spec) bool {
				for _, c := range commandCategories(s) {
					if c == cat {
						return true
					}
				}
				return false
			}
		case netio.ArgIs(x.Args[3], "pattern"):
			keep = func(s *command.Spec) bool { return slots.Match(val, []byte(s.Name), true) }
		}
	}
	if keep == nil {
		x.W.Error("ERR syntax error")
		return
	}
	var names []string
	for _, s := range command.All() {
		if keep(s) {
			names = append(names, s.Name)
		}
		for _, sub := range subcommandsSorted(s) {
			if keep(sub) {
				names = append(names, sub.Name)
			}
		}
	}
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

// getKeys resolves the command in x.Args[2:] and returns its key indexes,
// or writes the Redis error and returns ok=false.
func getKeys(x *netio.Ctx) (spec *command.Spec, args [][]byte, idx []int, ok bool) {
	args = x.Args[2:]
	spec = command.Lookup(args[0])
	if spec != nil && len(spec.Subcommands) > 0 && len(args) >= 2 {
		if sub := spec.Sub(args[1]); sub != nil {
			spec = sub
		} else if !spec.Bound() {
			spec = nil
		}
	}
	if spec == nil {
		x.W.Error("ERR Invalid command specified")
		return nil, nil, nil, false
	}
	if spec.Keys == nil && spec.First <= 0 || notKey(spec) {
		x.W.Error("ERR The command has no key arguments")
		return nil, nil, nil, false
	}
	if !spec.ArityOK(len(args)) {
		x.W.Error("ERR Invalid number of arguments specified for command")
		return nil, nil, nil, false
	}
	idx, err := spec.KeyIndexes(nil, args)
	if err != nil || len(idx) == 0 {
		x.W.Error("ERR Invalid arguments specified for command")
		return nil, nil, nil, false
	}
	return spec, args, idx, true
}

func commandGetKeys(x *netio.Ctx) {
	_, args, idx, ok := getKeys(x)
	if !ok {
		return
	}
	x.W.Array(len(idx))
	for _, i := range idx {
		x.W.Bulk(args[i])
	}
}

func commandGetKeysAndFlags(x *netio.Ctx) {
	spec, args, idx, ok := getKeys(x)
	if !ok {
		return
	}
	kf := keySpecFlags(spec)
	x.W.Array(len(idx))
	for _, i := range idx {
		x.W.Array(2)
		x.W.Bulk(args[i])
		x.W.Set(len(kf))
		for _, f := range kf {
			x.W.Simple(f)
		}
	}
}

func commandHelp(x *netio.Ctx) {
	netio.WriteHelp(x.W, "COMMAND", []string{
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	})
}
