// Package script is slotd's Lua scripting engine for EVAL and friends: the
// node-wide script cache (compiled once, shared read-only), the sandboxed
// gopher-lua VM each shard actor owns (Redis 7.0's globals, the redis.*
// API and its error formats) and Redis's Lua↔RESP conversion rules. It
// knows nothing about keyspaces: commands called from a script go through
// the Host the caller passes to Run.
package script

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Flags are the script flags a "#!lua flags=..." shebang declares.
type Flags uint8

const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
)

var flagNames = map[string]Flags{
	"no-writes":             FlagNoWrites,
	"allow-oom":             FlagAllowOOM,
	"allow-stale":           FlagAllowStale,
	"no-cluster":            FlagNoCluster,
	"allow-cross-slot-keys": FlagAllowCrossSlot,
}

// Script is one cached script. It is immutable and shared by every shard's
// VM: gopher-lua only reads a FunctionProto once compiled.
type Script struct {
	SHA     string // 40 lowercase hex digits
	Body    string
	Shebang bool // declared with "#!lua": Flags apply
	Flags   Flags
	Proto   *lua.FunctionProto
}

// Cache is a node's script cache (SCRIPT LOAD, EVAL and EVALSHA share it).
// Lookups are lock-free; SCRIPT FLUSH swaps in an empty map.
type Cache struct {
	m atomic.Pointer[sync.Map]
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	c := &Cache{}
	c.m.Store(new(sync.Map))
	return c
}

// SHA1Hex is the lowercase hex SHA1 of b (script ids, redis.sha1hex).
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// Get returns the script with the given SHA1 (in any case), or nil.
func (c *Cache) Get(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	v, ok := c.m.Load().Load(lowerHex(sha))
	if !ok {
		return nil
	}
	return v.(*Script)
}

// Exists reports whether a script with this SHA1 is cached.
func (c *Cache) Exists(sha []byte) bool { return c.Get(sha) != nil }

// Load compiles body (unless cached) and caches it. The error is the reply
// text ("ERR Error compiling script ..." or a shebang error).
func (c *Cache) Load(body []byte) (*Script, error) {
	sha := SHA1Hex(body)
	m := c.m.Load()
	if v, ok := m.Load(sha); ok {
		return v.(*Script), nil
	}
	s, err := Compile(body)
	if err != nil {
		return nil, err
	}
	s.SHA = sha
	v, _ := m.LoadOrStore(sha, s)
	return v.(*Script), nil
}

// Flush empties the cache. Scripts already running keep their compiled
// form.
func (c *Cache) Flush() { c.m.Store(new(sync.Map)) }

// Len is the number of cached scripts (INFO's number_of_cached_scripts).
func (c *Cache) Len() int {
	n := 0
	c.m.Load().Range(func(_, _ any) bool { n++; return true })
	return n
}

func lowerHex(b []byte) string {
	var buf [40]byte
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return string(buf[:len(b)])
}

// chunkName is what Redis names script chunks ("@user_script"); Lua error
// positions show it without the '@'.
const chunkName = "user_script"

// Compile parses a script body: an optional "#!lua [flags=...]" shebang
// line, then Lua 5.1 source. Errors carry Redis's reply texts.
func Compile(body []byte) (*Script, error) {
	src := string(body)
	s := &Script{Body: src}
	if strings.HasPrefix(src, "#!") {
		nl := strings.IndexByte(src, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("ERR Invalid script shebang")
		}
		flags, err := parseShebang(src[:nl])
		if err != nil {
			return nil, err
		}
		s.Shebang, s.Flags = true, flags
		// Keep the newline so line numbers still count the shebang.
		src = src[nl:]
	}
	proto, err := compileChunk(src, chunkName, "ERR Error compiling script (new function): ")
	if err != nil {
		return nil, err
	}
	s.Proto = proto
	return s, nil
}

// compileChunk compiles Lua source named chunk; errors start with prefix.
func compileChunk(src, chunk, prefix string) (*lua.FunctionProto, error) {
	parsed, err := parse.Parse(strings.NewReader(src), chunk)
	if err != nil {
		return nil, compileError(err, src, chunk, prefix)
	}
	proto, err := lua.Compile(parsed, chunk)
	if err != nil {
		return nil, compileError(err, src, chunk, prefix)
	}
	return proto, nil
}

// ShebangFlags reads the flags a body's "#!lua" shebang declares without
// compiling it; ok is false when the body has no valid shebang (a script
// in Redis 6 compatibility mode, or one EVAL will refuse).
func ShebangFlags(body []byte) (flags Flags, ok bool) {
	src := string(body)
	if !strings.HasPrefix(src, "#!") {
		return 0, false
	}
	nl := strings.IndexByte(src, '\n')
	if nl < 0 {
		return 0, false
	}
	flags, err := parseShebang(src[:nl])
	return flags, err == nil
}

// parseShebang reads "#!lua flags=a,b" the way Redis 7.0 does.
func parseShebang(line string) (Flags, error) {
	parts := strings.Fields(line)
	if len(parts) == 0 || parts[0] != "#!lua" {
		engine := line
		if len(parts) > 0 {
			engine = parts[0]
		}
		return 0, fmt.Errorf("ERR Unexpected engine in script shebang: %s", engine)
	}
	var flags Flags
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, fmt.Errorf("ERR Unknown lua shebang option: %s", p)
		}
		if list == "" {
			continue
		}
		for _, name := range strings.Split(list, ",") {
			f, ok := flagNames[name]
			if !ok {
				return 0, fmt.Errorf("ERR Unexpected flag in script shebang: %s", name)
			}
			flags |= f
		}
	}
	return flags, nil
}

// compileError words a gopher-lua parse or compile error like Lua 5.1's
// "user_script:<line>: <message>". gopher-lua's parser only says "syntax
// error"; Lua's most common wording for it is "unexpected symbol".
func compileError(err error, src, chunkName, prefix string) error {
	switch e := err.(type) {
	case *parse.Error:
		line, tok := e.Pos.Line, e.Token
		if line == parse.EOF || tok == "" {
			line = strings.Count(src, "\n") + 1
			tok = "<eof>"
		}
		msg := e.Message
		switch msg {
		case "syntax error", "Invalid token":
			msg = "unexpected symbol"
		case "illegal hexadecimal number":
			msg = "malformed number"
		case "unterminated multiline string":
			msg = "unfinished long string"
		case "unterminated string":
			msg = "unfinished string"
			if tok != "<eof>" && line > 1 {
				// The lexer stopped past the newline ending the string;
				// Lua reports the string's own line, quote included.
				line--
				text := strings.Split(src, "\n")[line-1]
				if i := strings.LastIndex(text, tok); i > 0 {
					tok = text[i-1:]
				}
			}
		}
		return fmt.Errorf("%s%s:%d: %s near '%s'", prefix, chunkName, line, msg, tok)
	case *lua.CompileError:
		return fmt.Errorf("%s%s:%d: %s", prefix, chunkName, e.Line, e.Message)
	}
	return fmt.Errorf("%s%s: %s", prefix, chunkName, strings.TrimSpace(err.Error()))
}
