package aof

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestManifestRoundTrip(t *testing.T) {
	m := manifest{Files: []fileEntry{
		{Name: baseName("appendonly.aof", 3, 0, true), Seq: 3, Type: 'b', Shard: 0},
		{Name: incrName("appendonly.aof", 3, 0), Seq: 3, Type: 'i', Shard: 0},
		{Name: incrName("appendonly.aof", 4, 1), Seq: 4, Type: 'i', Shard: 1},
		{Name: incrName("appendonly.aof", 3, 1), Seq: 3, Type: 'i', Shard: 1},
	}}
	got, err := parseManifest(m.encode())
	require.NoError(t, err)
	assert.Equal(t, m, got)
	assert.Equal(t, int64(4), got.gen())
	assert.Equal(t, 2, got.shardCount())
	assert.Equal(t, "appendonly.aof.3.s0.base.rdb", got.base(0))
	assert.Equal(t, "", got.base(1))
	incrs := got.incrs(1)
	require.Len(t, incrs, 2)
	assert.Equal(t, int64(3), incrs[0].Seq, "incr files replay in seq order")
	assert.Equal(t, "appendonly.aof.4.s1.incr.aof", incrs[1].Name)
}

func TestManifestErrors(t *testing.T) {
	for _, bad := range []string{
		"file a seq 1 type x shard 0",    // unknown type
		"file a seq x type b shard 0",    // bad seq
		"file a seq 1 type b shard",      // odd field count
		"file ../a seq 1 type b shard 0", // path outside the dir
		"file a seq 1 type b shard 0\nfile a seq 2 type i shard 0",
		"file a seq 1 type b shard 0\nfile b seq 2 type b shard 0",
	} {
		_, err := parseManifest([]byte(bad))
		assert.Error(t, err, bad)
	}
	m, err := parseManifest([]byte("# comment\n\nfile a seq 1 type b shard 0 future x\n"))
	require.NoError(t, err, "comments, blank lines and unknown keys are accepted")
	assert.Len(t, m.Files, 1)

	// redis-server 7's manifest: no shard, history lines.
	m, err = parseManifest([]byte("file appendonly.aof.1.base.rdb seq 1 type b\n" +
		"file appendonly.aof.1.incr.aof seq 1 type h\nfile appendonly.aof.2.incr.aof seq 2 type i\n"))
	require.NoError(t, err)
	assert.Equal(t, -1, m.shardCount())
	assert.Equal(t, []int{-1}, m.groups())
	assert.Equal(t, "appendonly.aof.1.base.rdb", m.base(-1))
	assert.Len(t, m.incrs(-1), 1)
}

func TestParseCommand(t *testing.T) {
	cmd := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"
	args, n, err := parseCommand([]byte(cmd+"*1\r\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, len(cmd), n)
	assert.Equal(t, [][]byte{[]byte("SET"), []byte("k"), {}}, args)

	// Every proper prefix is a truncated tail, never a format error.
	for i := 0; i < len(cmd); i++ {
		_, _, err := parseCommand([]byte(cmd[:i]), nil)
		assert.ErrorIs(t, err, errIncomplete, "prefix %q", cmd[:i])
	}
	for _, bad := range []string{"+OK\r\n", "*x\r\n", "*1\r\n:1\r\n", "*1\r\n$3\r\nabcd\r\n", "*0\r\n", "*1\n$1\r\na\r\n"} {
		_, _, err := parseCommand([]byte(bad), nil)
		assert.ErrorIs(t, err, errFormat, "%q", bad)
	}
}

func TestAppendCommand(t *testing.T) {
	b := appendCommand(nil, [][]byte{[]byte("FLUSHSLOTS"), []byte("12"), []byte("1000")})
	args, n, err := parseCommand(b, nil)
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
	assert.Equal(t, "1000", string(args[2]))
	s, ok := atoiSlot([]byte("16383"))
	assert.True(t, ok)
	assert.Equal(t, 16383, s)
	_, ok = atoiSlot([]byte("16384"))
	assert.False(t, ok)
}
