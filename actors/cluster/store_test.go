package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStoreLockFollowsSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	s, err := openStore(path)
	require.NoError(t, err)
	text, err := s.read()
	require.NoError(t, err)
	assert.Equal(t, "", text, "a new file is created empty")

	_, err = openStore(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is already used by a different Redis Cluster node")

	for _, content := range []string{"one\n", "two\n"} {
		require.NoError(t, s.save(content))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, content, string(got))
		// The lock moved to the renamed file: the name is still locked.
		_, err = openStore(path)
		require.Error(t, err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temp files left")

	s.close()
	s2, err := openStore(path)
	require.NoError(t, err)
	text, err = s2.read()
	require.NoError(t, err)
	assert.Equal(t, "two\n", text)
	s2.close()
}

func TestStoreSaveFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nodes.conf")
	s, err := openStore(path)
	require.NoError(t, err)
	defer s.close()
	require.NoError(t, s.save(nodesConf(1, 0, "0-100")))
	require.NoError(t, os.Chmod(dir, 0o500))
	defer func() { _ = os.Chmod(dir, 0o700) }()
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		_ = f.Close()
		t.Skip("running with privileges that ignore directory permissions")
	}
	// A new id needs the atomic replacement, which fails here.
	require.Error(t, s.save(strings.Replace(nodesConf(1, 0, "0-100"), "e90f7430", "aaaaaaaa", 1)))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, nodesConf(1, 0, "0-100"), string(got))
}

func nodesConf(epoch, vote int, slots string) string {
	return fmt.Sprintf("e90f74301a5c59ada58a1357a8df3cc2d3f8c5d7 127.0.0.1:23001@33001,,shard-id=15bd907e5c404a4a8796"+
		"6b3135cabb7f5984a538 myself,master - 0 0 %d connected %s\n"+
		"d208974273cfd6a8e3dc622f1639ff1d6cbde610 127.0.0.1:23003@33003,,shard-id=3708fb4c6c55e76743570eb74ee6fd606ae12b29"+
		" master - 0 1796055323668 7 connected 10923-16383\n"+
		"vars currentEpoch 9 lastVoteEpoch %d\n", epoch, slots, vote)
}

// TestStoreSaveTiers: a change of the node's own id replaces the file (new
// inode); anything else, its own epochs and votes included, is written in
// place (and fsync'd), as Redis 7.0 does.
func TestStoreSaveTiers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.conf")
	s, err := openStore(path)
	require.NoError(t, err)
	defer s.close()
	inode := func() os.FileInfo {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi
	}
	steps := []struct {
		text    string
		replace bool
	}{
		{nodesConf(1, 0, "0-100"), true}, // first save
		{nodesConf(1, 0, "0-100 200"), false},
		{nodesConf(1, 0, "0"), false}, // shorter: padding truncated
		{nodesConf(2, 0, "0"), false}, // own configEpoch
		{nodesConf(2, 3, "0"), false}, // vote
		{nodesConf(2, 3, "0-16383"), false},
		{strings.Replace(nodesConf(2, 3, "0"), "e90f7430", "bbbbbbbb", 1), true}, // new id
	}
	prev := inode()
	for i, st := range steps {
		require.NoError(t, s.save(st.text))
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, st.text, string(got), "step %d", i)
		cur := inode()
		assert.Equal(t, st.replace, !os.SameFile(prev, cur), "step %d replaces the file", i)
		prev = cur
		_, err = openStore(path)
		require.Error(t, err, "step %d: still locked", i)
	}
}

func TestDurableMark(t *testing.T) {
	assert.Equal(t, "e90f74301a5c59ada58a1357a8df3cc2d3f8c5d7", durableMark(nodesConf(4, 2, "1")))
	assert.Equal(t, durableMark(nodesConf(4, 2, "1")), durableMark(nodesConf(5, 3, "1-5000")+"\n\n"))
	assert.Equal(t, "", durableMark(""))
}
