package difftest_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/difftest"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

func envInt(t *testing.T, name string, def int) int {
	s, ok := os.LookupEnv(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "%s=%q", name, s)
	return n
}

// testHz makes redis-server notice a blocking command's 10 ms timeout
// within 10 ms instead of 100 (it checks timeouts once per event-loop tick);
// both servers get the same value.
const testHz = "100"

// TestDiff runs the seeded sequences against slotd and redis-server.
func TestDiff(t *testing.T) {
	seeds := envInt(t, "DIFFTEST_SEEDS", 200)
	first := envInt(t, "DIFFTEST_FIRST", 1)
	cmds := envInt(t, "DIFFTEST_CMDS", 2000)
	if _, ok := os.LookupEnv("DIFFTEST_SEED"); ok {
		first, seeds = envInt(t, "DIFFTEST_SEED", 0), 1
	}
	maxFail := envInt(t, "DIFFTEST_MAXFAIL", 3)

	n := nodetest.Start(t, "shard-actors", "4", "hz", testHz)
	settings, err := difftest.Settings(n.Addr)
	require.NoError(t, err)
	ref := difftest.StartRedis(t, append(settings, "--hz", testHz)...)
	has, err := difftest.Commands(n.Addr, difftest.OpCommands())
	require.NoError(t, err)
	var off []string
	for c, ok := range has {
		if !ok {
			off = append(off, c)
		}
	}
	slices.Sort(off)
	if len(off) > 0 {
		t.Logf("not in slotd yet, their ops are off: %s", strings.Join(off, " "))
	}
	runners := map[int]*difftest.Runner{
		2: {A: n.Addr, B: ref, Proto: 2, Scripting: has["eval"]},
		3: {A: n.Addr, B: ref, Proto: 3, Scripting: has["eval"]},
	}
	failed := 0
	start := time.Now()
	for seed := first; seed < first+seeds; seed++ {
		r := runners[2+seed%2]
		seq := difftest.GenerateCrossShard(uint64(seed), cmds, func(c string) bool { return has[c] })
		if runSeed(t, r, seed, seq, "Diff$") {
			continue
		}
		if failed++; failed >= maxFail {
			t.Logf("stopping after %d failing seeds", failed)
			break
		}
	}
	t.Logf("%d seeds x %d commands in %v", seeds, cmds, time.Since(start).Round(time.Millisecond))
	known := map[string]int{}
	for _, r := range runners {
		for k, v := range r.Known {
			known[k] += v
		}
	}
	if len(known) > 0 {
		t.Logf("known differences accepted (see known.go): %v", known)
	}
	if testing.Verbose() {
		logStats(t, runners[2].Stats, runners[3].Stats)
	}
}

// logStats prints how often each command ran and how often the reference
// rejected it: the generator's coverage.
func logStats(t *testing.T, all ...map[string]*[2]int) {
	sum := map[string][2]int{}
	for _, st := range all {
		for k, v := range st {
			s := sum[k]
			s[0] += v[0]
			s[1] += v[1]
			sum[k] = s
		}
	}
	names := make([]string, 0, len(sum))
	for k := range sum {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		fmt.Fprintf(&b, "%-18s %7d %5.1f%% err", k, sum[k][0], 100*float64(sum[k][1])/float64(max(sum[k][0], 1)))
		if i%3 == 2 {
			b.WriteString("\n")
		} else {
			b.WriteString(" | ")
		}
	}
	t.Logf("coverage (runs, share of error replies):\n%s", b.String())
}

// TestDiffReferenceAgainstItself runs the tester with redis-server on both
// sides: every difference it reports there would be a rule too strict for
// Redis's own nondeterminism.
func TestDiffReferenceAgainstItself(t *testing.T) {
	a := difftest.StartRedis(t, "--hz", testHz)
	b := difftest.StartRedis(t, "--hz", testHz)
	runners := []*difftest.Runner{{A: a, B: b, Proto: 2, Scripting: true}, {A: a, B: b, Proto: 3, Scripting: true}}
	seeds := envInt(t, "DIFFTEST_SELF_SEEDS", 10)
	for seed := 1; seed <= seeds; seed++ {
		r := runners[seed%2]
		seq := difftest.Generate(uint64(seed)+1_000_000, 2000, nil)
		m, err := r.Run(seq)
		require.NoError(t, err, "seed %d", seed)
		if m != nil {
			minSeq, minM := r.MinimizeMismatch(seq, m, 2000, time.Now().Add(time.Minute))
			t.Fatalf("reference against itself: %s", r.Report(uint64(seed)+1_000_000, len(seq), m, minSeq, minM))
		}
	}
	if testing.Verbose() {
		logStats(t, runners[0].Stats, runners[1].Stats)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a := difftest.Generate(42, 3000, nil)
	b := difftest.Generate(42, 3000, nil)
	require.Equal(t, a, b)
	require.Len(t, a, 3000)
	c := difftest.Generate(43, 3000, nil)
	require.NotEqual(t, a, c)
	only := difftest.Generate(42, 500, func(name string) bool { return name == "get" || name == "set" })
	for _, cmd := range only {
		require.Contains(t, []string{"GET", "SET", "NOSUCHCMD"}, cmd.Name(), "%q", cmd)
	}
}

func TestMinimize(t *testing.T) {
	var seq []difftest.Cmd
	for i := 0; i < 1000; i++ {
		seq = append(seq, difftest.Cmd{"SET", strconv.Itoa(i)})
	}
	// Fails when commands 17, 500 and 901 are all present, in order.
	fails := func(s []difftest.Cmd) bool {
		want := []string{"17", "500", "901"}
		for _, c := range s {
			if len(want) > 0 && c[1] == want[0] {
				want = want[1:]
			}
		}
		return len(want) == 0
	}
	got := difftest.Minimize(seq, fails, 10000, time.Now().Add(time.Minute))
	require.Equal(t, []difftest.Cmd{{"SET", "17"}, {"SET", "500"}, {"SET", "901"}}, got)
}

// TestReportReplaysInRedisCli feeds a report's sequence to redis-cli and
// checks the awkward arguments arrive intact.
func TestReportReplaysInRedisCli(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	addr := difftest.StartRedis(t)
	vals := []string{"", "x y", "\x00\xff\r\n\t", `q"uo'te\`, "{k}s0", "-1"}
	var seq []difftest.Cmd
	for i, v := range vals {
		seq = append(seq, difftest.Cmd{"SET", "key" + strconv.Itoa(i), v})
	}
	r := &difftest.Runner{A: addr, B: addr, Proto: 2, Chunk: 200}
	m := &difftest.Mismatch{Index: len(seq), Cmd: difftest.Cmd{"GET", "x"}, Reason: "test"}
	rep := r.Report(1, len(seq), m, seq, nil)
	_, input, ok := strings.Cut(rep, difftest.ReproBegin)
	require.True(t, ok)
	input, _, ok = strings.Cut(input, difftest.ReproEnd)
	require.True(t, ok)
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(cli, "-h", host, "-p", port)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "ERR", "every line must be a valid command")
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer func() { _ = c.Close() }()
	for i, v := range vals {
		got, err := c.Get(t.Context(), "key"+strconv.Itoa(i)).Result()
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
}

// TestDumpDecoding checks the payload readers on payloads redis-server
// produced.
func TestDumpDecoding(t *testing.T) {
	ctx := t.Context()
	c := redis.NewClient(&redis.Options{Addr: difftest.StartRedis(t)})
	defer func() { _ = c.Close() }()
	dump := func(k string) string {
		p, err := c.Dump(ctx, k).Result()
		require.NoError(t, err)
		require.True(t, difftest.DumpValid(p), "%q", p)
		return p
	}
	require.NoError(t, c.Set(ctx, "str", "hello", 0).Err())
	p := dump("str")
	require.False(t, difftest.DumpValid(p[:len(p)-1]+"x"))

	// An intset stays 8 bytes wide after its only 64-bit member left; 32
	// members make Redis compress it (LZF).
	require.NoError(t, c.SAdd(ctx, "is", -7, int64(9223372036854775807)).Err())
	for i := 0; i < 32; i++ {
		require.NoError(t, c.SAdd(ctx, "is", i*1000).Err())
	}
	require.NoError(t, c.SRem(ctx, "is", int64(9223372036854775807)).Err())
	width, vals, ok := difftest.DumpIntset(dump("is"))
	require.True(t, ok)
	require.Equal(t, 8, width)
	require.Len(t, vals, 33)
	require.Equal(t, int64(-7), vals[0])
	require.Equal(t, int64(31000), vals[32])

	// A hashtable set: its elements as raw RDB strings.
	require.NoError(t, c.SAdd(ctx, "ht", "a", "bb", 5, strings.Repeat("z", 100)).Err())
	items, ok := difftest.DumpItems(dump("ht"))
	require.True(t, ok)
	require.Len(t, items, 4)
}

// runSeed runs seq (seed's sequence) on r and reports false, after an
// error with the minimized mismatch and how to replay it (go test -run
// runPattern), when the two servers' replies differ.
func runSeed(t *testing.T, r *difftest.Runner, seed int, seq []difftest.Cmd, runPattern string) bool {
	t.Helper()
	m, err := r.Run(seq)
	require.NoError(t, err, "seed %d (RESP%d)", seed, r.Proto)
	if m == nil {
		return true
	}
	minSeq, minM := r.MinimizeMismatch(seq, m, 4000, time.Now().Add(2*time.Minute))
	t.Errorf("%s\n(replay: DIFFTEST_SEED=%d go test ./cmd/node/difftest -run '%s' -v)",
		r.Report(uint64(seed), len(seq), m, minSeq, minM), seed, runPattern)
	return false
}
