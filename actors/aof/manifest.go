package aof

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The manifest (<appendfilename>.manifest in appenddirname) lists the
// files of the AOF, one per line, in Redis 7's multi-part style with a
// shard field added:
//
//	file appendonly.aof.3.s0.base.rdb seq 3 type b shard 0
//	file appendonly.aof.3.s0.incr.aof seq 3 type i shard 0
//
// Each shard has at most one base (type b: an RDB file of its slots) and
// its incr files (type i: RESP commands, applied after the base in seq
// order). Lines starting with # are comments. Unknown keys are ignored so
// later versions can add fields.
//
// A manifest written by redis-server 7 (no shard field, type h history
// lines) is read too: its files hold the whole dataset, which is loaded
// by slot into the shards and then rewritten in this layout.

// fileEntry is one manifest line.
type fileEntry struct {
	Name  string
	Seq   int64
	Type  byte // 'b' base, 'i' incr
	Shard int
}

type manifest struct {
	Files []fileEntry
}

// parseManifest reads a manifest; errors name the line.
func parseManifest(b []byte) (manifest, error) {
	var m manifest
	for n, line := range bytes.Split(b, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		f := strings.Fields(s)
		if len(f)%2 != 0 {
			return m, fmt.Errorf("invalid AOF manifest file format at line %d", n+1)
		}
		e := fileEntry{Shard: -1, Seq: -1}
		for i := 0; i < len(f); i += 2 {
			k, v := f[i], f[i+1]
			switch k {
			case "file":
				e.Name = v
			case "seq":
				x, err := strconv.ParseInt(v, 10, 64)
				if err != nil || x < 0 {
					return m, fmt.Errorf("invalid seq %q at line %d of the AOF manifest", v, n+1)
				}
				e.Seq = x
			case "type":
				if v != "b" && v != "i" && v != "h" {
					return m, fmt.Errorf("unknown AOF file type %q at line %d of the AOF manifest", v, n+1)
				}
				e.Type = v[0]
			case "shard":
				x, err := strconv.Atoi(v)
				if err != nil || x < 0 || x > 1<<16 {
					return m, fmt.Errorf("invalid shard %q at line %d of the AOF manifest", v, n+1)
				}
				e.Shard = x
			}
		}
		if e.Name == "" || e.Seq < 0 || e.Type == 0 || strings.ContainsAny(e.Name, "/\\") {
			return m, fmt.Errorf("incomplete or invalid entry at line %d of the AOF manifest", n+1)
		}
		if e.Type != 'h' { // history files are Redis's leftovers
			m.Files = append(m.Files, e)
		}
	}
	for i, e := range m.Files {
		for _, o := range m.Files[:i] {
			if o.Name == e.Name {
				return m, fmt.Errorf("file %s listed twice in the AOF manifest", e.Name)
			}
			if e.Type == 'b' && o.Type == 'b' && o.Shard == e.Shard {
				return m, fmt.Errorf("shard %d has two base files in the AOF manifest", e.Shard)
			}
		}
	}
	return m, nil
}

func (m manifest) encode() []byte {
	var b bytes.Buffer
	b.WriteString("# slotd AOF manifest: per shard, a base (RDB) then incr files (RESP) in seq order\n")
	for _, e := range m.Files {
		fmt.Fprintf(&b, "file %s seq %d type %c shard %d\n", e.Name, e.Seq, e.Type, e.Shard)
	}
	return b.Bytes()
}

// gen is the highest seq in the manifest.
func (m manifest) gen() int64 {
	g := int64(0)
	for _, e := range m.Files {
		g = max(g, e.Seq)
	}
	return g
}

// shardCount is one more than the highest shard listed (0 when empty),
// or -1 for a manifest of redis-server's (files without a shard).
func (m manifest) shardCount() int {
	n := 0
	for _, e := range m.Files {
		if e.Shard < 0 {
			return -1
		}
		n = max(n, e.Shard+1)
	}
	return n
}

// groups lists the shard numbers the files belong to (-1: redis-server's).
func (m manifest) groups() []int {
	var out []int
	for _, e := range m.Files {
		if !slices.Contains(out, e.Shard) {
			out = append(out, e.Shard)
		}
	}
	return out
}

// base returns shard i's base file name ("" for none).
func (m manifest) base(i int) string {
	for _, e := range m.Files {
		if e.Shard == i && e.Type == 'b' {
			return e.Name
		}
	}
	return ""
}

// incrs returns shard i's incr files in seq order.
func (m manifest) incrs(i int) []fileEntry {
	var out []fileEntry
	for _, e := range m.Files {
		if e.Shard == i && e.Type == 'i' {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out
}

func (m manifest) has(name string) bool {
	for _, e := range m.Files {
		if e.Name == name {
			return true
		}
	}
	return false
}

// baseName names a base file: .rdb for an RDB base, .aof for commands
// (aof-use-rdb-preamble no).
func baseName(prefix string, gen int64, shard int, rdbBase bool) string {
	ext := ".base.aof"
	if rdbBase {
		ext = ".base.rdb"
	}
	return prefix + "." + strconv.FormatInt(gen, 10) + ".s" + strconv.Itoa(shard) + ext
}

func incrName(prefix string, gen int64, shard int) string {
	return prefix + "." + strconv.FormatInt(gen, 10) + ".s" + strconv.Itoa(shard) + ".incr.aof"
}
