package script

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLibraryBodyRunsAtMostLoadTimeout(t *testing.T) {
	l := NewLibraries()
	_, err := l.Load("#!lua name=spin\nwhile true do end", false)
	require.EqualError(t, err, "Error registering functions: ERR FUNCTION LOAD timeout")
	// The loader VM is still usable.
	name, err := l.Load("#!lua name=ok\nredis.register_function('f', function() return 1 end)", false)
	require.NoError(t, err)
	assert.Equal(t, "ok", name)
}

func TestLibrariesReplaceAndRestorePolicies(t *testing.T) {
	l := NewLibraries()
	a := "#!lua name=a\nredis.register_function('fa', function() return 'a' end)"
	b := "#!lua name=b\nredis.register_function('fb', function() return 'b' end)"
	_, err := l.Load(a, false)
	require.NoError(t, err)
	gen := l.Gen()
	old := l.Function([]byte("fa")).Lib
	_, err = l.Load(a, true)
	require.NoError(t, err)
	assert.Greater(t, l.Gen(), gen)
	assert.False(t, l.Loaded(old), "REPLACE makes a new library")
	assert.True(t, l.Loaded(l.Function([]byte("fa")).Lib))

	dump := l.Dump(true)
	require.NoError(t, l.Restore(dump, RestoreReplace))
	assert.EqualError(t, l.Restore(dump, RestoreAppend), "Library 'a' already exists")
	_, err = l.Load(b, false)
	require.NoError(t, err)
	require.NoError(t, l.Restore(dump, RestoreFlush))
	libs, funcs := l.Counts()
	assert.Equal(t, 1, libs)
	assert.Equal(t, 1, funcs)
	assert.Nil(t, l.Function([]byte("fb")))

	bad := append([]byte(nil), dump...)
	bad[3] ^= 0xff
	assert.Equal(t, ErrBadPayload, l.Restore(bad, RestoreFlush))
}
