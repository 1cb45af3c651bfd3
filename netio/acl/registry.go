package acl

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Handle is one user as connections see it: the current version of its
// rules (swapped by ACL SETUSER; readers load it once per check). A handle
// whose user was deleted or replaced by ACL LOAD is Gone.
type Handle struct {
	cur  atomic.Pointer[User]
	gone atomic.Bool
}

// User returns the handle's current rules; a nil handle (an internal
// client, such as a replica's link to its primary) is allowed everything.
func (h *Handle) User() *User {
	if h == nil {
		return superuser
	}
	return h.cur.Load()
}

// superuser is what internal clients run as (Redis's user-less clients).
var superuser = &User{Name: "(superuser)", Enabled: true, Unrestricted: true}

// Gone reports whether the user was deleted (its connections are closed).
func (h *Handle) Gone() bool { return h.gone.Load() }

func newHandle(u *User) *Handle {
	h := &Handle{}
	h.cur.Store(u)
	return h
}

// Registry is the node's set of users; the default user always exists.
type Registry struct {
	mu      sync.Mutex
	users   map[string]*Handle
	Default *Handle
}

// NewRegistry returns a registry holding Redis's initial default user.
func NewRegistry() *Registry {
	d := newHandle(DefaultUser())
	return &Registry{users: map[string]*Handle{"default": d}, Default: d}
}

// Get returns the named user's handle, or nil.
func (r *Registry) Get(name string) *Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[name]
}

// Set runs ACL SETUSER: it applies ops to the named user (creating it)
// and returns the old and new versions (old nil for a new user), or the
// error text.
func (r *Registry) Set(name string, ops [][]byte, pubsubAll bool) (old, nu *User, h *Handle, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h = r.users[name]
	if h != nil {
		old = h.User()
	}
	nu, msg = SetUser(old, name, ops, pubsubAll)
	if msg != "" {
		return nil, nil, nil, msg
	}
	if h == nil {
		h = newHandle(nu)
		r.users[name] = h
	} else {
		h.cur.Store(nu)
	}
	return old, nu, h, ""
}

// Delete removes the named users (never default) and returns the handles
// removed, now Gone.
func (r *Registry) Delete(names []string) []*Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Handle
	for _, n := range names {
		if h := r.users[n]; h != nil && h != r.Default {
			delete(r.users, n)
			h.gone.Store(true)
			out = append(out, h)
		}
	}
	return out
}

// Users returns a snapshot of every user by name.
func (r *Registry) Users() map[string]*User {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*User, len(r.users))
	for n, h := range r.users {
		out[n] = h.User()
	}
	return out
}

// Lines returns every user as an aclfile line, sorted by name (ACL LIST,
// ACL SAVE, CONFIG REWRITE).
func (r *Registry) Lines() []string {
	us := r.Users()
	var out []string
	for _, n := range SortedNames(us) {
		out = append(out, us[n].Line())
	}
	return out
}

// Replace installs users (as parsed by ParseLines or ParseDirectives) in
// place of every user but default, whose handle takes the new default
// rules; when users has none, default keeps its rules if keepDefault,
// else it becomes Redis's fresh default (ACL LOAD). It returns the handles
// replaced, now Gone.
func (r *Registry) Replace(users []*User, keepDefault bool) []*Handle {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := map[string]*Handle{}
	def := DefaultUser()
	if keepDefault {
		def = r.Default.User()
	}
	for _, u := range users {
		if u.Name == "default" {
			def = u
			continue
		}
		next[u.Name] = newHandle(u)
	}
	var old []*Handle
	for _, h := range r.users {
		if h != r.Default {
			h.gone.Store(true)
			old = append(old, h)
		}
	}
	r.Default.cur.Store(def)
	next["default"] = r.Default
	r.users = next
	return old
}

// SetDefaultPassword applies requirepass to the default user: resetpass,
// then the password, or nopass when it is empty.
func (r *Registry) SetDefaultPassword(pass string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.Default.User().Clone()
	_ = u.apply([]byte("resetpass"), false)
	if pass == "" {
		_ = u.apply([]byte("nopass"), false)
	} else {
		_ = u.apply(append([]byte(">"), pass...), false)
	}
	u.finish()
	r.Default.cur.Store(u)
}

// ParseLines builds users from aclfile lines ("user <name> rules...").
// name is the file's name for the error texts; errors follow Redis's
// ACLLoadFromFile wording and, when non-empty, nothing may be installed.
func ParseLines(name string, lines []string, pubsubAll bool) ([]*User, string) {
	var errs strings.Builder
	var users []*User
	seen := map[string]bool{}
	for i, line := range lines {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		words := strings.Split(line, " ")
		var argv []string
		for _, w := range words {
			if w != "" {
				argv = append(argv, w)
			}
		}
		if len(argv) == 0 {
			continue
		}
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", name, n)
			continue
		}
		if HasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", name, n, argv[1])
			continue
		}
		if seen[argv[1]] {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], n)
			continue
		}
		seen[argv[1]] = true
		ops := make([][]byte, 0, len(argv)-2)
		for _, w := range argv[2:] {
			ops = append(ops, []byte(w))
		}
		merged, bad := mergeSelectors(ops)
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", name, n)
			continue
		}
		u := NewUser(argv[1], pubsubAll)
		syntax := false
		for _, op := range merged {
			if err := u.apply(op, pubsubAll); err != nil {
				if err == errUnknownCmd {
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", name, n, op, err.Error())
				} else if !syntax {
					fmt.Fprintf(&errs, "%s:%d: %s. ", name, n, err.Error())
					syntax = true
				}
			}
		}
		u.finish()
		users = append(users, u)
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, errs.String()
	}
	return users, ""
}

// ParseDirectives builds users from the config's user directives (each
// the words after "user"); a duplicate or an invalid rule is an error
// naming it, as Redis refuses to start then.
func ParseDirectives(lines [][]string, pubsubAll bool) ([]*User, error) {
	var users []*User
	seen := map[string]bool{}
	for _, words := range lines {
		if len(words) < 1 {
			return nil, fmt.Errorf("wrong number of arguments for 'user'")
		}
		name := words[0]
		if seen[name] {
			return nil, fmt.Errorf("Error in user declaration '%s': %s", name, ErrDuplicate.Error())
		}
		seen[name] = true
		if HasSpaces(name) {
			return nil, fmt.Errorf("Spaces not allowed in ACL usernames")
		}
		ops := make([][]byte, 0, len(words)-1)
		for _, w := range words[1:] {
			ops = append(ops, []byte(w))
		}
		merged, bad := mergeSelectors(ops)
		if bad >= 0 {
			return nil, fmt.Errorf("Unmatched parenthesis in acl selector starting at '%s'", ops[bad])
		}
		u := NewUser(name, pubsubAll)
		if name == "default" {
			u = DefaultUser()
			_ = u.apply([]byte("reset"), pubsubAll)
		}
		for _, op := range merged {
			if err := u.apply(op, pubsubAll); err != nil {
				return nil, fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, name, err.Error())
			}
		}
		u.finish()
		users = append(users, u)
	}
	return users, nil
}
