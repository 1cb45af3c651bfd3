package cluster

import (
	"os"
	"path/filepath"
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
	require.NoError(t, s.save("old\n"))
	require.NoError(t, os.Chmod(dir, 0o500))
	defer func() { _ = os.Chmod(dir, 0o700) }()
	if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
		_ = f.Close()
		t.Skip("running with privileges that ignore directory permissions")
	}
	require.Error(t, s.save("new\n"))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got))
}
