package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// study runs the measurements and keeps every run.
type study struct {
	o       options
	tmp     string
	started time.Time
	load    string // load average at the start
	runs    []record
}

// record is one measurement as recorded in runs.csv.
type record struct {
	section  string // "cores" (the sweep) or "three" (3-primary clusters)
	cores    int    // c of the sweep; 0 in "three" (unpinned)
	side     string
	pt       point
	round    int
	loadCPUs string
	m        measurement
}

// rounds measures pts against sides for o.rounds alternating rounds.
func (st *study) rounds(ctx context.Context, section string, cores int, sides []*side, pts []point, loadCPUs []int) error {
	for r := 0; r < st.o.rounds; r++ {
		order := slices.Clone(sides)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, pt := range pts {
			for _, s := range order {
				m, err := st.measure(ctx, s, pt, loadCPUs)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", s.name, pt, err)
				}
				st.runs = append(st.runs, record{section: section, cores: cores, side: s.name, pt: pt, round: r,
					loadCPUs: cpuList(loadCPUs), m: m})
				label := section
				if cores > 0 {
					label = "c=" + strconv.Itoa(cores)
				}
				fmt.Printf("%-5s round %d/%d %-32s %-15s %s\n", label, r+1, st.o.rounds, pt, s.name, m)
			}
		}
	}
	return nil
}

// coreCount is one point of the sweep: every side on the first c CPUs,
// the load generator on the others (or on all CPUs when none is left).
func (st *study) coreCount(ctx context.Context, c int, valkey bool) error {
	cpus := st.o.cpus[:c]
	load := st.o.cpus[c:]
	if len(load) == 0 {
		load = st.o.cpus
	}
	sides, err := st.sides(ctx, c, cpus, valkey)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range sides {
			s.stop()
		}
	}()
	fmt.Printf("c=%d: servers on CPUs %s, load generators on CPUs %s\n", c, cpuList(cpus), cpuList(load))
	for _, s := range sides {
		fmt.Printf("  %-14s %d process(es), first on %s\n", s.name, len(s.procs), s.entry().Addr())
	}
	return st.rounds(ctx, "cores", c, sides, st.o.points(), load)
}

// threePrimaries compares a slotd cluster of 3 primaries with a Redis one,
// every process unpinned, with memtier --cluster-mode.
func (st *study) threePrimaries(ctx context.Context) error {
	three := func(kind string) []node { return []node{{kind: kind}, {kind: kind}, {kind: kind}} }
	slotd, err := st.launch(ctx, "slotd-3", "", three("slotd"))
	if err != nil {
		return err
	}
	defer slotd.stop()
	redis, err := st.launch(ctx, "redis-3", "", three("redis"))
	if err != nil {
		return err
	}
	defer redis.stop()
	fmt.Printf("3 primaries each: slotd from %s, redis from %s, everything unpinned\n",
		slotd.entry().Addr(), redis.entry().Addr())
	var pts []point
	for _, pt := range st.o.points() {
		if pt.tool == "memtier" {
			pts = append(pts, pt)
		}
	}
	return st.rounds(ctx, "three", 0, []*side{slotd, redis}, pts, st.o.cpus)
}
