package difftest_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/cmd/node/difftest"
)

// inProcess fills the command table as a node does (the in-process engine
// then finds every command where a node would) and returns the generator's
// filter of the commands the engine serves.
func inProcess() func(string) bool {
	node.RegisterCommands()
	enginetest.Register()
	return difftest.EngineHas
}

// TestEngineSeedReplaysByteForByte: a seed's command stream replayed on two
// new in-process engines gives the same reply bytes, in both protocols; the
// stream is a real one (many reply kinds, values, errors and transactions),
// not a trivially repeatable one.
func TestEngineSeedReplaysByteForByte(t *testing.T) {
	has := inProcess()
	for _, seed := range []uint64{1, 2, 77} {
		seq := difftest.Generate(seed, 2000, has)
		require.Len(t, seq, 2000)
		for _, proto := range []int{2, 3} {
			replay := func() []string {
				out, err := difftest.ReplayInProcess(enginetest.New(enginetest.Options{Seed: seed}), proto, seq)
				require.NoError(t, err, "seed %d RESP%d", seed, proto)
				return out
			}
			first, second := replay(), replay()
			require.Len(t, first, len(seq))
			require.Equal(t, first, second, "seed %d RESP%d: replies differ between runs", seed, proto)

			kinds, distinct, errs, execs := map[byte]int{}, map[string]bool{}, 0, 0
			for i, raw := range first {
				kinds[raw[0]]++
				distinct[raw] = true
				if raw[0] == '-' {
					errs++
				}
				if seq[i].Name() == "EXEC" && (raw[0] == '*' && raw != "*-1\r\n") {
					execs++
				}
			}
			require.GreaterOrEqual(t, len(kinds), 5, "seed %d RESP%d: reply kinds %v", seed, proto, kinds)
			require.Greater(t, len(distinct), 300, "seed %d RESP%d: distinct replies", seed, proto)
			require.Greater(t, errs, 20, "seed %d RESP%d: error replies", seed, proto)
			require.Less(t, errs, len(seq)/2, "seed %d RESP%d: error replies", seed, proto)
			require.Positive(t, execs, "seed %d RESP%d: transactions that ran", seed, proto)
		}
	}
	a, err := difftest.ReplayInProcess(enginetest.New(enginetest.Options{Seed: 1}), 2, difftest.Generate(1, 2000, has))
	require.NoError(t, err)
	b, err := difftest.ReplayInProcess(enginetest.New(enginetest.Options{Seed: 2}), 2, difftest.Generate(2, 2000, has))
	require.NoError(t, err)
	require.NotEqual(t, a, b, "another seed, another stream")
}

// TestDiffInProcess compares the in-process engine with redis-server over
// seeded streams under the rules of TestDiff (DIFFTEST_ENGINE_SEEDS seeds,
// default 40; DIFFTEST_FIRST, DIFFTEST_CMDS and DIFFTEST_SEED as there).
// Only the reference is reached over TCP.
func TestDiffInProcess(t *testing.T) {
	has := inProcess()
	seeds := envInt(t, "DIFFTEST_ENGINE_SEEDS", 40)
	first := envInt(t, "DIFFTEST_FIRST", 1)
	cmds := envInt(t, "DIFFTEST_CMDS", 2000)
	if _, ok := os.LookupEnv("DIFFTEST_SEED"); ok {
		first, seeds = envInt(t, "DIFFTEST_SEED", 0), 1
	}
	maxFail := envInt(t, "DIFFTEST_MAXFAIL", 3)
	var off []string
	for _, c := range difftest.OpCommands() {
		if !has(c) {
			off = append(off, c)
		}
	}
	t.Logf("served by a node outside the engine, their ops are off: %s", strings.Join(off, " "))
	ref := difftest.StartRedis(t, "--hz", testHz)
	failed := 0
	start := time.Now()
	var runners []*difftest.Runner
	for seed := first; seed < first+seeds; seed++ {
		r := &difftest.Runner{B: ref, Proto: 2 + seed%2, Scripting: true, Wall: true,
			Engine: func() *enginetest.Engine {
				return enginetest.New(enginetest.Options{Seed: uint64(seed), Start: time.Now()})
			}}
		runners = append(runners, r)
		seq := difftest.Generate(uint64(seed), cmds, has)
		if runSeed(t, r, seed, seq, "DiffInProcess$") {
			continue
		}
		if failed++; failed >= maxFail {
			t.Logf("stopping after %d failing seeds", failed)
			break
		}
	}
	t.Logf("in-process: %d seeds x %d commands in %v", seeds, cmds, time.Since(start).Round(time.Millisecond))
	if testing.Verbose() {
		var stats []map[string]*[2]int
		for _, r := range runners {
			stats = append(stats, r.Stats)
		}
		logStats(t, stats...)
	}
}
