package netio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/netio/acl"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// The ACL command: users and permissions (netio/acl holds the rules; this
// file runs them against connections: AUTH, refusals, ACL LOG, killing the
// connections of deleted or narrowed users).
func registerCmdACL() {
	adm := []string{"admin", "noscript", "loading", "stale"}
	plain := []string{"noscript", "loading", "stale"}
	sub := func(arity int, flags []string, summary, since string, h func(*Ctx), tips ...string) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Categories: []string{"slow"}, Group: "server",
			Since: since, Summary: summary, Tips: tips}, h)
	}
	command.Register(&command.Spec{Name: "acl", Arity: -2, Categories: []string{"slow"}, Group: "server",
		Since: "6.0.0", Summary: "A container for Access List Control commands",
		Subcommands: map[string]*command.Spec{
			"cat":     sub(-2, plain, "List the ACL categories or the commands inside a category", "6.0.0", aclCat),
			"deluser": sub(-3, adm, "Remove the specified ACL users and the associated rules", "6.0.0", aclDelUser),
			"dryrun": sub(-4, adm, "Returns whether the user can execute the given command without executing the command.",
				"7.0.0", aclDryRun),
			"genpass": sub(-2, plain, "Generate a pseudorandom secure password to use for ACL users", "6.0.0", aclGenPass),
			"getuser": sub(3, adm, "Get the rules for a specific ACL user", "6.0.0", aclGetUser),
			"help":    sub(2, []string{"loading", "stale"}, "Show helpful text about the different subcommands", "6.0.0", aclHelp),
			"list":    sub(2, adm, "List the current ACL rules in ACL config file format", "6.0.0", aclList),
			"load":    sub(2, adm, "Reload the ACLs from the configured ACL file", "6.0.0", aclLoad),
			"log":     sub(-2, adm, "List latest events denied because of ACLs in place", "6.0.0", aclLog),
			"save":    sub(2, adm, "Save the current ACL rules in the configured ACL file", "6.0.0", aclSave),
			"setuser": sub(-3, adm, "Modify or create the rules for a specific ACL user", "6.0.0", aclSetUser),
			"users":   sub(2, adm, "List the username of all the configured ACL rules", "6.0.0", aclUsers),
			"whoami":  sub(2, plain, "Return the name of the user associated to the current connection", "6.0.0", aclWhoami),
		}})
}

// pubsubAll reports acl-pubsub-default allchannels.
func (s *Server) pubsubAll() bool { return s.Cfg.String("acl-pubsub-default") == "allchannels" }

// userName is the name CLIENT LIST and ACL LOG show for cl's user.
func (cl *client) userName() string {
	if cl.user == nil {
		return "(superuser)"
	}
	return cl.user.User().Name
}

// authRequired reports whether cl must AUTH before running commands:
// not logged in, and the default user is not an open nopass one (Redis's
// authRequired).
func (s *Server) authRequired(cl *client) bool {
	return !cl.authed && !s.ACL.Default.User().AuthFree()
}

// setDefaultAuth logs cl in as the default user when that needs no
// password (a new connection, RESET).
func (s *Server) setDefaultAuth(cl *client) {
	cl.user = s.ACL.Default
	cl.authed = s.ACL.Default.User().AuthFree()
}

// login checks user/pass; on success cl is logged in as that user, else
// the failure goes to ACL LOG.
func (s *Server) login(x *Ctx, user, pass []byte) bool {
	h := s.ACL.Get(string(user))
	if h != nil && h.User().CheckPassword(pass) {
		x.C.user = h
		x.C.authed = true
		return true
	}
	ctx := acl.CtxToplevel
	if x.C.multi {
		ctx = acl.CtxMulti
	}
	s.aclLogAdd(x.C, acl.Entry{Reason: acl.DeniedAuth, Context: ctx, Object: string(x.Args[0]), Username: string(user)})
	return false
}

func (s *Server) aclLogAdd(cl *client, e acl.Entry) {
	now := time.Now().UnixMilli()
	if cl != nil {
		e.ClientInfo = string(cl.appendInfo(nil, now))
	}
	s.aclLog.Add(e, now, int(s.Cfg.Int("acllog-max-len")))
}

// aclRefusal checks u against a command about to run on cl; a refusal is
// logged and returned as the client's error text (Redis's processCommand
// wording, or EXEC's when inTx).
func (s *Server) aclRefusal(cl *client, u *acl.User, spec *command.Spec, args [][]byte, inTx bool) string {
	d, pos := acl.Check(u, spec, args)
	if d == acl.OK {
		return ""
	}
	ctx := acl.CtxToplevel
	if cl.multi || inTx {
		ctx = acl.CtxMulti
	}
	obj := spec.Name
	if d != acl.DeniedCmd {
		obj = string(args[pos])
	}
	s.aclLogAdd(cl, acl.Entry{Reason: d, Context: ctx, Object: obj, Username: u.Name})
	if inTx {
		why := "no permission to execute the command or subcommand"
		switch d {
		case acl.DeniedKey:
			why = "no permission to touch the specified keys"
		case acl.DeniedChannel:
			why = "no permission to access one of the channels used as arguments"
		}
		return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
			"This command is no longer allowed for the following reason: " + why
	}
	switch d {
	case acl.DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case acl.DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "NOPERM this user has no permissions to run the '" + spec.Name + "' command"
}

// ScriptACLDenied records in ACL LOG a command a script was refused;
// client is the caller's id.
func (s *Server) ScriptACLDenied(client int64, e acl.Entry) {
	s.clientMu.Lock()
	cl := s.clients[client]
	s.clientMu.Unlock()
	s.aclLogAdd(cl, e)
}

// ClientACLUser returns the ACL user of the client with the given id (nil
// when it is gone or internal).
func (s *Server) ClientACLUser(client int64) *acl.User {
	s.clientMu.Lock()
	cl := s.clients[client]
	s.clientMu.Unlock()
	if cl == nil || cl.user == nil {
		return nil
	}
	return cl.user.User()
}

func aclSetUser(x *Ctx) {
	name := string(x.Args[2])
	if acl.HasSpaces(name) {
		x.W.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	old, nu, h, msg := x.S.ACL.Set(name, x.Args[3:], x.S.pubsubAll())
	if msg != "" {
		x.W.Error("ERR " + msg)
		return
	}
	if old != nil && acl.ChannelsRevoked(nu, old) {
		x.S.killRevokedSubscribers(x, h, nu)
	}
	x.W.OK()
}

// killRevokedSubscribers closes the connections of h subscribed to a
// channel or pattern nu no longer allows.
func (s *Server) killRevokedSubscribers(x *Ctx, h *acl.Handle, nu *acl.User) {
	doomed := map[*client]bool{}
	s.ps.mu.RLock()
	for kind := range s.ps.subs {
		for name, l := range s.ps.subs[kind] {
			for _, cl := range l.list {
				if cl.user == h && !doomed[cl] && !acl.KeepsSubscription(nu, name, kind == psPattern) {
					doomed[cl] = true
				}
			}
		}
	}
	s.ps.mu.RUnlock()
	for cl := range doomed {
		s.kill(x, cl)
	}
}

// killUsers closes every connection logged in as one of hs.
func (s *Server) killUsers(x *Ctx, hs []*acl.Handle) {
	if len(hs) == 0 {
		return
	}
	set := map[*acl.Handle]bool{}
	for _, h := range hs {
		set[h] = true
	}
	for _, cl := range s.clientsSnapshot() {
		if cl.user != nil && set[cl.user] {
			s.kill(x, cl)
		}
	}
}

func aclDelUser(x *Ctx) {
	names := make([]string, 0, len(x.Args)-2)
	for _, a := range x.Args[2:] {
		if string(a) == "default" {
			x.W.Error("ERR The 'default' user cannot be removed")
			return
		}
		names = append(names, string(a))
	}
	gone := x.S.ACL.Delete(names)
	x.S.killUsers(x, gone)
	x.W.Int(int64(len(gone)))
}

func writeSelector(w *resp.Writer, s *acl.Selector) {
	w.BulkString("commands")
	w.BulkString(s.CommandRules())
	w.BulkString("keys")
	w.BulkString(s.KeysText())
	w.BulkString("channels")
	w.BulkString(s.ChannelsText())
}

func aclGetUser(x *Ctx) {
	h := x.S.ACL.Get(string(x.Args[2]))
	w := x.W
	if h == nil {
		w.Null()
		return
	}
	u := h.User()
	w.Map(6)
	w.BulkString("flags")
	fl := u.Flags()
	w.Set(len(fl))
	for _, f := range fl {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.Array(len(u.Passwords))
	for _, p := range u.Passwords {
		w.BulkString(p)
	}
	writeSelector(w, u.Selectors[0])
	w.BulkString("selectors")
	w.Array(len(u.Selectors) - 1)
	for _, s := range u.Selectors[1:] {
		w.Map(3)
		writeSelector(w, s)
	}
}

func aclList(x *Ctx) {
	lines := x.S.ACL.Lines()
	x.W.Array(len(lines))
	for _, l := range lines {
		x.W.BulkString(l)
	}
}

func aclUsers(x *Ctx) {
	names := acl.SortedNames(x.S.ACL.Users())
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

func aclWhoami(x *Ctx) {
	if x.C.user == nil {
		x.W.Null()
		return
	}
	x.W.BulkString(x.C.user.User().Name)
}

func aclCat(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP.")
		return
	}
	if len(x.Args) == 2 {
		x.W.Array(len(command.ACLCategories))
		for _, c := range command.ACLCategories {
			x.W.BulkString(c)
		}
		return
	}
	c := command.CategoryIndex(string(x.Args[2]))
	if c < 0 {
		x.W.Error("ERR Unknown category '" + Trunc(string(x.Args[2]), 128) + "'")
		return
	}
	names := acl.CategoryCommands(c)
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

func aclGenPass(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'GENPASS'. Try ACL HELP.")
		return
	}
	bits := int64(256)
	if len(x.Args) == 3 {
		v, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		bits = v
	}
	if bits <= 0 || bits > 4096 {
		x.W.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	chars := int((bits + 3) / 4)
	buf := make([]byte, (chars+1)/2)
	_, _ = rand.Read(buf)
	x.W.BulkString(hex.EncodeToString(buf)[:chars])
}

func aclLog(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP.")
		return
	}
	n := int64(10)
	if len(x.Args) == 3 {
		if ArgIs(x.Args[2], "reset") {
			x.S.aclLog.Reset()
			x.W.OK()
			return
		}
		v, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		n = max(v, 0)
	}
	entries := x.S.aclLog.Newest(int(min(n, 1<<30)))
	now := time.Now().UnixMilli()
	w := x.W
	w.Array(len(entries))
	for _, e := range entries {
		w.Map(7)
		w.BulkString("count")
		w.Int(e.Count)
		w.BulkString("reason")
		w.BulkString(e.Reason.Reason())
		w.BulkString("context")
		w.BulkString(e.Context.String())
		w.BulkString("object")
		w.BulkString(e.Object)
		w.BulkString("username")
		w.BulkString(e.Username)
		w.BulkString("age-seconds")
		w.Double(float64(now-e.CreatedMs) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.ClientInfo)
	}
}

func aclDryRun(x *Ctx) {
	h := x.S.ACL.Get(string(x.Args[2]))
	if h == nil {
		x.W.Error("ERR User '" + string(x.Args[2]) + "' not found")
		return
	}
	args := x.Args[3:]
	spec, _ := command.Resolve(args)
	if spec == nil {
		x.W.Error("ERR Command '" + string(args[0]) + "' not found")
		return
	}
	if !spec.ArityOK(len(args)) {
		x.W.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
		return
	}
	d, pos := acl.Check(h.User(), spec, args)
	switch d {
	case acl.OK:
		x.W.OK()
	case acl.DeniedCmd:
		x.W.BulkString("This user has no permissions to run the '" + spec.Name + "' command")
	case acl.DeniedKey:
		x.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' key")
	default:
		x.W.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' channel")
	}
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the " +
	"ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order " +
	"to store users in the Redis configuration."

// ACLFile is the aclfile path as Redis opens it (relative to dir, which
// is the working directory).
func (s *Server) ACLFile() string { return s.Cfg.String("aclfile") }

// LoadACLFile reads the aclfile and installs its users in place of the
// current ones; the handles replaced are returned (their connections must
// be closed). On error nothing changes and the text is Redis's.
func (s *Server) LoadACLFile() ([]*acl.Handle, string) {
	name := s.ACLFile()
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, "Error loading ACLs, opening file '" + name + "': " + errnoText(err)
	}
	users, msg := acl.ParseLines(name, strings.Split(string(data), "\n"), s.pubsubAll())
	if msg != "" {
		return nil, msg
	}
	return s.ACL.Replace(users, false), ""
}

// errnoText is an OS error as strerror words it.
func errnoText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	t := err.Error()
	if t != "" {
		t = strings.ToUpper(t[:1]) + t[1:]
	}
	return t
}

// LoadUsers installs the users of the config's user directives or of
// the aclfile at start-up (both at once is refused, as Redis refuses it)
// and makes CONFIG REWRITE write the users back (unless an aclfile holds
// them).
func (s *Server) LoadUsers() error {
	lines := s.Cfg.Users()
	if s.ACLFile() != "" && len(lines) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file " +
			"path is invalid. This setup is very likely to lead to configuration errors and security holes, please " +
			"define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	users, err := acl.ParseDirectives(lines, s.pubsubAll())
	if err != nil {
		return err
	}
	if len(users) > 0 {
		s.ACL.Replace(users, true)
	}
	if s.ACLFile() != "" {
		if _, msg := s.LoadACLFile(); msg != "" {
			return errors.New("Aborting Redis startup because of ACL errors: " + msg)
		}
	}
	s.Cfg.OnRewriteUsers(func() []string {
		if s.ACLFile() != "" {
			return nil
		}
		return s.ACL.Lines()
	})
	return nil
}

func aclLoad(x *Ctx) {
	if x.S.ACLFile() == "" {
		x.W.Error(errNoACLFile)
		return
	}
	gone, msg := x.S.LoadACLFile()
	if msg != "" {
		x.W.Error("ERR " + msg)
		return
	}
	x.S.killUsers(x, gone)
	x.W.OK()
}

func aclSave(x *Ctx) {
	name := x.S.ACLFile()
	if name == "" {
		x.W.Error(errNoACLFile)
		return
	}
	data := strings.Join(x.S.ACL.Lines(), "\n") + "\n"
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+strconv.Itoa(os.Getpid()))
	err := os.WriteFile(tmp, []byte(data), 0o644)
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		_ = os.Remove(tmp)
		x.S.Log.Warn().Err(err).Msg("Writing ACL file for ACL SAVE")
		x.W.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	x.W.OK()
}

func aclHelp(x *Ctx) {
	lines := []string{
		"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
		"HELP",
		"    Print this help.",
	}
	x.W.Array(len(lines))
	for _, l := range lines {
		x.W.Simple(l)
	}
}
