package slots

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// startClusterRedis starts a throw-away redis-server in cluster mode on a
// free port and returns a client connected to it. The server is stopped when
// the test ends. The test is skipped if redis-server is not on PATH.
func startClusterRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH; skipping cross-check against a real Redis (CI installs it)")
	}
	dir := t.TempDir()
	port := freeClusterPort(t)
	logFile := filepath.Join(dir, "redis.log")

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--logfile", logFile,
	)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second // then SIGKILL
	require.NoError(t, cmd.Start())

	client := redis.NewClient(&redis.Options{
		Addr:            net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     time.Second,
	})
	t.Cleanup(func() {
		_ = client.Close()
		cancel()
		_ = cmd.Wait()
	})

	serverLog := func() string {
		b, _ := os.ReadFile(logFile)
		return string(b)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		pctx, pcancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(pctx).Err()
		pcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer PING: %v\nlog:\n%s", port, err, serverLog())
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	info, err := client.Do(context.Background(), "CLUSTER", "INFO").Text()
	require.NoError(t, err, "server not in cluster mode? log:\n%s", serverLog())
	require.Contains(t, info, "cluster_state:")
	return client
}

// freeClusterPort finds a TCP port p such that both p and its cluster bus port
// p+10000 are currently free.
func freeClusterPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		if p+10000 > 65535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		l.Close()
		if err != nil {
			continue
		}
		bus.Close()
		return p
	}
	t.Fatal("no free port pair (p, p+10000) found")
	return 0
}

// randomKey produces keys of several shapes, with '{' and '}' frequent enough
// to exercise every hash-tag branch.
func randomKey(r *rand.Rand) []byte {
	const braceAlphabet = "{}{}{}ab:\x00\xff"
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	fromAlphabet := func(alpha string, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return b
	}
	switch r.IntN(5) {
	case 0: // arbitrary binary
		return randBytes(r.IntN(40))
	case 1: // dense in braces
		return fromAlphabet(braceAlphabet, r.IntN(16))
	case 2: // prefix{tag}suffix, parts possibly empty and containing braces
		var k []byte
		k = append(k, fromAlphabet(braceAlphabet+"xyz", r.IntN(4))...)
		k = append(k, '{')
		k = append(k, randBytes(r.IntN(6))...)
		k = append(k, '}')
		k = append(k, fromAlphabet(braceAlphabet+"xyz", r.IntN(6))...)
		return k
	case 3: // printable ASCII, longer
		return fromAlphabet(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~", 1+r.IntN(80))
	default: // binary with braces spliced in
		k := randBytes(r.IntN(24))
		for range r.IntN(4) {
			if len(k) > 0 {
				k[r.IntN(len(k))] = "{}"[r.IntN(2)]
			}
		}
		return k
	}
}

// TestHashSlotMatchesRedis compares HashSlot with CLUSTER KEYSLOT of a real
// redis-server for fixed and ≥10 000 random (binary) keys.
func TestHashSlotMatchesRedis(t *testing.T) {
	client := startClusterRedis(t)
	ctx := context.Background()

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SLOTS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		seed = v
	}
	t.Logf("random keys seed %d (set SLOTS_SEED to reproduce)", seed)
	r := rand.New(rand.NewPCG(seed, 0x736c6f7464))

	keys := [][]byte{
		{}, []byte("123456789"), []byte("foo"), []byte("user:1"), []byte("user:2"),
		[]byte("{user:1}:cart"), []byte("{user1000}.following"), []byte("{user1000}.followers"),
		[]byte("foo{}{bar}"), []byte("foo{{bar}}zap"), []byte("foo{bar}{zap}"), []byte("{"),
		[]byte("}"), []byte("{}"), []byte("}{"), []byte("{{}}"), []byte("a{}}"), []byte("{\x00}"),
	}
	for range 12000 {
		keys = append(keys, randomKey(r))
	}

	const batch = 2000
	for lo := 0; lo < len(keys); lo += batch {
		hi := min(lo+batch, len(keys))
		pipe := client.Pipeline()
		cmds := make([]*redis.IntCmd, 0, hi-lo)
		for _, k := range keys[lo:hi] {
			cmds = append(cmds, pipe.ClusterKeySlot(ctx, string(k)))
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		for i, c := range cmds {
			k := keys[lo+i]
			require.Equal(t, int(c.Val()), HashSlot(k), "HashSlot(%q)", k)
			require.Equal(t, int(c.Val()), HashSlotString(string(k)), "HashSlotString(%q)", k)
		}
	}
}

// TestParseSlotMatchesRedis checks ParseSlot's accept/reject decisions
// against CLUSTER COUNTKEYSINSLOT, which parses its argument as a slot.
func TestParseSlotMatchesRedis(t *testing.T) {
	client := startClusterRedis(t)
	ctx := context.Background()

	inputs := []string{
		"0", "1", "9", "10", "5460", "16383", "16384", "99999", "100000", "-1", "-0",
		"+1", "+0", "01", "00", "007", " 1", "1 ", "1x", "x", "", "1.0", "1e3", "0x10",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"18446744073709551617", "\x001", "1\x00", "١",
	}
	for i := range 300 {
		inputs = append(inputs, strconv.Itoa(i*61-200))
	}

	pipe := client.Pipeline()
	cmds := make([]*redis.Cmd, len(inputs))
	for i, in := range inputs {
		cmds[i] = pipe.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", in)
	}
	_, _ = pipe.Exec(ctx) // per-command errors are expected and checked below
	for i, in := range inputs {
		_, err := cmds[i].Int64()
		var rerr redis.Error
		if err != nil && !errors.As(err, &rerr) {
			t.Fatalf("COUNTKEYSINSLOT %q: transport error %v", in, err)
		}
		got, ok := ParseSlot([]byte(in))
		require.Equal(t, err == nil, ok, "ParseSlot(%q) ok; redis said %v", in, err)
		if ok {
			want, convErr := strconv.Atoi(in)
			require.NoError(t, convErr)
			require.Equal(t, want, got, fmt.Sprintf("ParseSlot(%q)", in))
		}
	}
}
