package config

import "strings"

// User directives ("user <name> <rules>...", Redis's ACL users declared
// in redis.conf): the loader keeps their words in order for the ACL to
// build users from; CONFIG REWRITE writes back what the ACL says.

// user records one user directive (a single quoted word is split, as a
// --user "name rules" option gives it).
func (ld *loader) user(words []string) string {
	if len(words) == 1 {
		split, ok := SplitArgs(words[0])
		if !ok {
			return "invalid value for 'user': '" + words[0] + "' - Unbalanced quotes in configuration line"
		}
		words = split
	}
	if len(words) == 0 {
		return "wrong number of arguments for 'user'"
	}
	ld.users = append(ld.users, words)
	return ""
}

// Users returns the user directives' words, each starting with the name.
func (c *Config) Users() [][]string {
	if p := c.users.Load(); p != nil {
		return *p
	}
	return nil
}

// OnRewriteUsers sets the source of the user lines CONFIG REWRITE writes
// (each a whole "user ..." line; none removes the file's user lines).
func (c *Config) OnRewriteUsers(fn func() []string) { c.userRewrite.Store(&fn) }

// userLines returns the indexes of the user directive lines.
func userLines(lines []string) []int {
	var idx []int
	for i, raw := range lines {
		line := strings.Trim(raw, " \t\r\n")
		if words, ok := SplitArgs(line); ok && len(words) > 0 && strings.EqualFold(words[0], "user") {
			idx = append(idx, i)
		}
	}
	return idx
}

// replaceLines puts want in place of the old lines at idx (left-over old
// lines become blank, left-over new ones are appended).
func replaceLines(out [][]string, idx []int, want []string, appended []string) []string {
	for j, i := range idx {
		if j < len(want) {
			out[i] = want[j : j+1]
		} else {
			out[i] = []string{""}
		}
	}
	if len(want) > len(idx) {
		appended = append(appended, want[len(idx):]...)
	}
	return appended
}
