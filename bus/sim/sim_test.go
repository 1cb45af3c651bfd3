package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Scenario tests run over many seeds. Environment:
//
//	SLOTD_SIM_SEED=n    run only seed n, with a trace of the run on failure
//	SLOTD_SIM_SEEDS=k   run k seeds per scenario (default 500, failover
//	                    scenarios 100; a tenth with -short)
//	SLOTD_SIM_BASE=b    first seed (default 1)

const defaultSeeds = 500

// scenario runs fn for every seed, in parallel, and reports the failing
// seeds with the command that replays one.
func scenario(t *testing.T, fn func(seed uint64, trace func(string)) error) {
	scenarioN(t, defaultSeeds, fn)
}

// scenarioN is scenario with its own default number of seeds.
func scenarioN(t *testing.T, seeds int, fn func(seed uint64, trace func(string)) error) {
	t.Parallel()
	if v := os.Getenv("SLOTD_SIM_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SLOTD_SIM_SEED: %v", err)
		}
		var lines []string
		err = fn(seed, func(l string) { lines = append(lines, l) })
		if err != nil {
			for _, l := range lines {
				t.Log(l)
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
		return
	}
	count := seeds
	if testing.Short() {
		count = max(seeds/10, 5)
	}
	if v := os.Getenv("SLOTD_SIM_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SLOTD_SIM_SEEDS: %v", err)
		}
		count = n
	}
	base := uint64(1)
	if v := os.Getenv("SLOTD_SIM_BASE"); v != "" {
		b, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SLOTD_SIM_BASE: %v", err)
		}
		base = b
	}
	var (
		next   atomic.Uint64
		mu     sync.Mutex
		failed []string
		wg     sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= uint64(count) {
					return
				}
				seed := base + i
				if err := fn(seed, nil); err != nil {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("seed %d: %v", seed, err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		for i, f := range failed {
			if i == 5 {
				t.Errorf("... and %d more", len(failed)-5)
				break
			}
			t.Error(f)
		}
		t.Fatalf("%d of %d seeds failed; replay one with SLOTD_SIM_SEED=<seed> go test ./bus/sim -run '%s$' -v",
			len(failed), count, t.Name())
	}
}

// noisy derives a network configuration from the seed: sizes, timeouts and
// fault rates vary from run to run.
func noisy(seed uint64, nodes int) Config {
	c := Config{Seed: seed, Nodes: nodes, CheckSave: true}
	c.NodeTimeout = []int64{1000, 2000, 5000}[seed%3]
	switch seed % 4 {
	case 1:
		c.Loss, c.Dup, c.Reorder = 0.02, 0.02, 0.05
	case 2:
		c.MaxDelay, c.MinDelay, c.DialFail = 80, 1, 0.1
	case 3:
		c.Loss, c.Reorder, c.DialFail = 0.05, 0.2, 0.05
	}
	c.Codec = seed%7 == 0
	return c
}

func newNet(cfg Config, trace func(string)) *Net {
	n := New(cfg)
	n.Trace = trace
	return n
}
