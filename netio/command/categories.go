package command

import (
	"sort"
	"strings"
)

// ACLCategories are Redis 7.0's ACL categories in Redis's order (ACL CAT,
// COMMAND INFO and the rules ACL GETUSER prints follow it).
var ACLCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting"}

// CategoryNames returns the ACL categories of s: those its spec lists plus
// the ones Redis derives from its flags (write, read unless scripting,
// admin and dangerous, pubsub, fast, blocking, and slow when not fast), in
// ACLCategories order.
func (s *Spec) CategoryNames() []string {
	has := map[string]bool{}
	for _, c := range s.Categories {
		has[strings.ToLower(strings.TrimPrefix(c, "@"))] = true
	}
	if s.Is("write") {
		has["write"] = true
	}
	if s.Is("readonly") && !has["scripting"] {
		has["read"] = true
	}
	if s.Is("admin") {
		has["admin"], has["dangerous"] = true, true
	}
	if s.Is("pubsub") {
		has["pubsub"] = true
	}
	if s.Is("fast") {
		has["fast"] = true
	}
	if s.Is("blocking") {
		has["blocking"] = true
	}
	if !has["fast"] {
		has["slow"] = true
	}
	var out []string
	for _, c := range ACLCategories {
		if has[c] {
			out = append(out, c)
			delete(has, c)
		}
	}
	var rest []string
	for c := range has {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// CategoryIndex returns c's position in ACLCategories (case-insensitive),
// or -1.
func CategoryIndex(c string) int {
	for i, n := range ACLCategories {
		if strings.EqualFold(n, c) {
			return i
		}
	}
	return -1
}
