package acl_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/netio/acl"
	"github.com/slotd/slotd/netio/command"
)

// A small command table of the test binary's own: string and set commands,
// a container with subcommands, an admin command.
func init() {
	sub := func(flags ...string) *command.Spec { return &command.Spec{Arity: -2, Flags: flags} }
	command.Register(
		&command.Spec{Name: "get", Arity: 2, First: 1, Last: 1, Step: 1, Flags: []string{"readonly", "fast"}, Categories: []string{"string"}},
		&command.Spec{Name: "set", Arity: -3, First: 1, Last: 1, Step: 1, Flags: []string{"write"}, Categories: []string{"string"}},
		&command.Spec{Name: "incr", Arity: 2, First: 1, Last: 1, Step: 1, Flags: []string{"write", "fast"}, Categories: []string{"string"}},
		&command.Spec{Name: "sadd", Arity: -3, First: 1, Last: 1, Step: 1, Flags: []string{"write", "fast"}, Categories: []string{"set"}},
		&command.Spec{Name: "select", Arity: 2, Flags: []string{"fast"}, Categories: []string{"connection"}},
		&command.Spec{Name: "acl", Arity: -2, Subcommands: map[string]*command.Spec{"whoami": sub(), "setuser": sub("admin")}},
		&command.Spec{Name: "client", Arity: -2, Subcommands: map[string]*command.Spec{"id": sub(), "kill": sub("admin")}},
		&command.Spec{Name: "debug", Arity: -2, Flags: []string{"admin"}},
	)
}

func ops(s string) [][]byte {
	var out [][]byte
	for _, w := range strings.Fields(s) {
		out = append(out, []byte(w))
	}
	return out
}

// The rules GETUSER prints rebuild the same permissions (every command
// allowed or not alike), for additive and subtractive rule sets.
func TestCommandRulesRebuildThePermissions(t *testing.T) {
	for _, rules := range []string{
		"+@all", "-@all", "+@all -@string +incr -debug +debug|digest", "+@string -incr +acl +debug|digest",
		"-@all +@set +acl", "+@all -client +client|id", "-@all +select|0", "+@all -@dangerous +@admin -acl|setuser",
	} {
		u, msg := acl.SetUser(nil, "u", ops("on nopass allkeys allchannels "+rules), false)
		require.Empty(t, msg, rules)
		desc := u.Selectors[0].CommandRules()
		v, msg := acl.SetUser(nil, "v", ops("on nopass allkeys allchannels "+desc), false)
		require.Empty(t, msg, desc)
		for _, c := range command.All() {
			for _, s := range append([]*command.Spec{c}, subs(c)...) {
				args := [][]byte{[]byte(s.Name), []byte("0")}
				du, _ := acl.Check(u, s, args)
				dv, _ := acl.Check(v, s, args)
				require.Equal(t, du, dv, "%s: %q -> %q", s.Name, rules, desc)
			}
		}
	}
}

func subs(c *command.Spec) []*command.Spec {
	var out []*command.Spec
	for _, s := range c.Subcommands {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *command.Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Key patterns: %R~ allows reading, %W~ writing, ~ both; a command is
// allowed when one selector allows it and all of its keys.
func TestKeyPermissions(t *testing.T) {
	u, msg := acl.SetUser(nil, "u", ops("on +@all %R~r* %W~w* ~rw* (+get ~other)"), false)
	require.Empty(t, msg)
	get, set := command.Lookup([]byte("get")), command.Lookup([]byte("set"))
	check := func(spec *command.Spec, args ...string) acl.Denied {
		var a [][]byte
		for _, s := range args {
			a = append(a, []byte(s))
		}
		d, _ := acl.Check(u, spec, a)
		return d
	}
	require.Equal(t, acl.OK, check(get, "get", "r1"))
	require.Equal(t, acl.DeniedKey, check(get, "get", "w1"))
	require.Equal(t, acl.OK, check(set, "set", "w1", "v"))
	require.Equal(t, acl.DeniedKey, check(set, "set", "w1", "v", "GET"))
	require.Equal(t, acl.OK, check(set, "set", "rw1", "v", "GET"))
	require.Equal(t, acl.OK, check(get, "get", "other"))
	require.Equal(t, acl.DeniedKey, check(set, "set", "other", "v"))
}
