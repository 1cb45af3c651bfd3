package cluster

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSaveNoSyncInPlace(t *testing.T) {
	st, err := openStore(filepath.Join(t.TempDir(), "nodes.conf"))
	require.NoError(t, err)
	defer st.close()
	long := strings.Repeat("a", 100) + "\n"
	require.NoError(t, st.save(long))
	require.NoError(t, st.saveNoSync("short\n"))
	got, err := st.read()
	require.NoError(t, err)
	assert.Equal(t, "short\n", got)
	require.NoError(t, st.saveNoSync(long+long))
	got, err = st.read()
	require.NoError(t, err)
	assert.Equal(t, long+long, got)
	// A durable save after in-place ones still replaces the file.
	require.NoError(t, st.save("x\n"))
	require.NoError(t, st.saveNoSync("yy\n"))
	got, err = st.read()
	require.NoError(t, err)
	assert.Equal(t, "yy\n", got)
}
