package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shutdown-on-sigterm decides what SIGTERM does: save forces a final
// snapshot without save rules, nosave skips it with them; shutdown-on-sigint
// does the same for SIGINT.
func TestShutdownOnSignalFlags(t *testing.T) {
	ctx := context.Background()
	port, dir := freePorts(t, 1), t.TempDir()
	standalone := []string{"--cluster-enabled", "no"}
	dump := filepath.Join(dir, "dump.rdb")

	p := startProc(t, port, dir, append(standalone, "--shutdown-on-sigterm", "save")...) // --save ""
	c := p.client(2)
	require.NoError(t, c.Set(ctx, "k", "v1", 0).Err())
	_ = c.Close()
	p.stop()
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.output())
	_, err := os.Stat(dump)
	require.NoError(t, err, "shutdown-on-sigterm save writes a snapshot")

	p = startProc(t, port, dir, append(standalone, "--save", "3600 1", "--shutdown-on-sigint", "nosave")...)
	c = p.client(2)
	assert.Equal(t, "v1", c.Get(ctx, "k").Val())
	require.NoError(t, c.Set(ctx, "k", "v2", 0).Err())
	_ = c.Close()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	<-p.done
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.output())

	p = startProc(t, port, dir, standalone...)
	c = p.client(2)
	defer c.Close()
	assert.Equal(t, "v1", c.Get(ctx, "k").Val(), "shutdown-on-sigint nosave kept the old snapshot")
}
