package aof

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// applyBatch is how many commands go to a shard in one message on replay.
const applyBatch = 512

// load replays the AOF the manifest lists: every base first (in parallel),
// then each shard's incr files (in parallel across shards, in seq order
// within one). found is false when there is no manifest.
func (m *Manager) load() (found bool, err error) {
	b, err := os.ReadFile(m.manifestPath())
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	man, err := parseManifest(b)
	if err != nil {
		return false, fmt.Errorf("%s: %w", m.manifestPath(), err)
	}
	for _, e := range man.Files {
		if _, err := os.Stat(filepath.Join(m.Dir(), e.Name)); err != nil {
			return false, fmt.Errorf("the AOF file %s listed in the manifest doesn't exist: %w", e.Name, err)
		}
	}
	m.p.SetLoading(true)
	defer m.p.SetLoading(false)
	expire := m.g.NoActiveExpire.Swap(true) // no expiry by the clock while replaying
	defer m.g.NoActiveExpire.Store(expire)
	start := time.Now()
	groups := man.groups()

	errs := make([]error, len(groups))
	counts := make([]int, len(groups))
	endDB := make([]int, len(groups)) // the database each group's last file ends in
	var wg sync.WaitGroup
	var baseSize int64
	var mu sync.Mutex
	for gi, i := range groups {
		name := man.base(i)
		if name == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := filepath.Join(m.Dir(), name)
			var b []byte
			var err error
			if strings.HasSuffix(name, ".aof") {
				// A RESP base (redis-server with aof-use-rdb-preamble no).
				counts[gi], _, err = m.replayFile(path, false, swapTarget(len(groups), i, m.g.N()))
			} else if b, err = os.ReadFile(path); err == nil {
				_, _, err = m.p.LoadRDB(b)
			}
			if err != nil {
				errs[gi] = fmt.Errorf("loading the AOF base %s: %w", path, err)
			}
			mu.Lock()
			baseSize += int64(len(b))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	for gi, i := range groups {
		incrs := man.incrs(i)
		if len(incrs) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, e := range incrs {
				n, db, err := m.replayFile(filepath.Join(m.Dir(), e.Name), j == len(incrs)-1, swapTarget(len(groups), i, m.g.N()))
				counts[gi] += n
				endDB[gi] = db
				if err != nil {
					errs[gi] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	m.man = man
	m.endDB = map[int]int{}
	for gi, i := range groups {
		m.endDB[i] = endDB[gi]
	}
	m.baseSize.Store(baseSize)
	m.p.ResetDirty()
	m.log.Info().Msgf("DB loaded from append only file: %.3f seconds (%d commands replayed, %d file groups)",
		time.Since(start).Seconds(), total, len(groups))
	return true, nil
}

// replayFile applies one incr file. A command cut short at the end of the
// last file (a crash mid-write), or a transaction without its EXEC there,
// is dropped and the file truncated before it when aof-load-truncated is
// yes; anything malformed elsewhere stops the load.
// swapTarget is the shard that applies the SWAPDBs of file group i of
// ngroups: each shard's own file swaps that shard's part, a single file
// (redis-server's) every shard (-1).
func swapTarget(ngroups, i, nshards int) int {
	if ngroups == nshards && ngroups > 1 {
		return i
	}
	return -1
}

func (m *Manager) replayFile(path string, last bool, swapShard int) (n, db int, err error) {
	n, err = m.replayFileDB(path, last, swapShard, &db)
	return n, db, err
}

// replayFileDB replays path; *endDB is the database its records end in.
func (m *Manager) replayFileDB(path string, last bool, swapShard int, endDB *int) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	r := replayer{m: m, specs: map[string]*command.Spec{}, sem: make(chan struct{}, 4), swapShard: swapShard,
		batches: make([]*engine.ApplyBatch, m.g.N())}
	defer r.wg.Wait()
	pos, txStart, count, db := 0, -1, 0, 0
	defer func() { *endDB = db }()
	loadDelay := m.cfg.Var("key-load-delay")
	var args [][]byte
	var tx []engine.Replicated
	for pos < len(b) {
		var n int
		args, n, err = parseCommand(b[pos:], args[:0])
		if err == errIncomplete {
			break
		}
		if err != nil {
			return count, fmt.Errorf("Bad file format reading the append only file %s at offset %d: "+
				"make a backup of your AOF file, then use redis-check-aof --fix", path, pos)
		}
		payload := b[pos : pos+n]
		persist.KeyDelay(loadDelay.Int(), 1)
		switch {
		case strings.EqualFold(string(args[0]), "multi"):
			if txStart >= 0 {
				return count, fmt.Errorf("Bad file format reading the append only file %s at offset %d: "+
					"nested MULTI", path, pos)
			}
			txStart = pos
		case strings.EqualFold(string(args[0]), "exec"):
			for _, rc := range tx {
				r.add(rc)
			}
			tx, txStart = tx[:0], -1
		case strings.EqualFold(string(args[0]), "select"):
			id, err := strconv.Atoi(string(args[len(args)-1]))
			if len(args) != 2 || err != nil || id < 0 || id >= m.g.Databases() {
				return count, fmt.Errorf("the append only file %s selects DB %q at offset %d, out of the "+
					"%d databases of this node", path, args[len(args)-1], pos, m.g.Databases())
			}
			db = id
		case strings.EqualFold(string(args[0]), "swapdb") && len(args) == 3:
			a, err1 := strconv.Atoi(string(args[1]))
			b, err2 := strconv.Atoi(string(args[2]))
			if err1 != nil || err2 != nil || a < 0 || b < 0 || a >= m.g.Databases() || b >= m.g.Databases() {
				return count, fmt.Errorf("Bad file format reading the append only file %s at offset %d: "+
					"SWAPDB of databases out of range", path, pos)
			}
			rc := engine.Replicated{Slot: -1, DB: a, Swap: true, SwapWith: b}
			if txStart >= 0 {
				tx = append(tx, rc)
			} else {
				r.add(rc)
			}
		case strings.EqualFold(string(args[0]), "flushall") || strings.EqualFold(string(args[0]), "flushdb"):
			// In redis-server's files: every slot of the database (FLUSHDB)
			// or of every database goes.
			dbs := []int{db}
			if strings.EqualFold(string(args[0]), "flushall") {
				dbs = dbs[:0]
				for d := 0; d < m.g.Databases(); d++ {
					dbs = append(dbs, d)
				}
			}
			for i := 0; i < m.g.N(); i++ {
				var all []int
				for s := i; s < slots.NumSlots; s += m.g.N() {
					all = append(all, s)
				}
				for _, d := range dbs {
					rc := engine.Replicated{Flush: all, Slot: -1, DB: d}
					if txStart >= 0 {
						tx = append(tx, rc)
					} else {
						r.addTo(i, rc)
					}
				}
			}
		case string(args[0]) == engine.FlushSlots:
			for _, a := range args[1:] {
				if s, ok := atoiSlot(a); ok {
					rc := engine.Replicated{Flush: []int{s}, Slot: -1, DB: db}
					if txStart >= 0 {
						tx = append(tx, rc)
					} else {
						r.addTo(m.g.Of(s), rc)
					}
				}
			}
		default:
			spec := r.spec(args)
			if spec == nil {
				return count, fmt.Errorf("Unknown command '%s' reading the append only file %s at offset %d",
					trunc(string(args[0]), 64), path, pos)
			}
			idx, _ := spec.KeyIndexes(r.idx[:0], args)
			r.idx = idx
			if len(idx) == 0 || idx[0] >= len(args) {
				m.log.Warn().Str("command", spec.Name).Msgf("keyless command in %s at offset %d skipped", path, pos)
				break
			}
			slot := slots.HashSlot(args[idx[0]])
			for _, k := range idx[1:] {
				if k < len(args) && slots.HashSlot(args[k]) != slot {
					return count, fmt.Errorf("the append only file %s has a command whose keys are in different "+
						"hash slots at offset %d ('%s'): load such a dataset from an RDB file instead",
						path, pos, trunc(string(args[0]), 64))
				}
			}
			rc := engine.Replicated{Spec: spec, Payload: payload, Slot: slot, DB: db}
			if txStart >= 0 {
				tx = append(tx, rc)
			} else {
				r.add(rc)
			}
		}
		count++
		pos += n
	}
	r.flushAll()
	if pos < len(b) || txStart >= 0 {
		cut := pos
		if txStart >= 0 {
			cut = txStart
		}
		if !last || !m.cfg.Bool("aof-load-truncated") {
			return count, fmt.Errorf("Unexpected end of file reading the append only file %s at offset %d. "+
				"You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "+
				"2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart "+
				"the server.", path, cut)
		}
		m.log.Warn().Msgf("!!! Warning: short read while loading the AOF file %s!!!", path)
		m.log.Warn().Msgf("AOF %s loaded anyway because aof-load-truncated is enabled; truncated to %d bytes "+
			"(%d dropped)", path, cut, len(b)-cut)
		if err := os.Truncate(path, int64(cut)); err != nil {
			return count, fmt.Errorf("truncating the AOF file %s: %w", path, err)
		}
	}
	return count, nil
}

// replayer batches one file's commands per shard.
type replayer struct {
	m       *Manager
	specs   map[string]*command.Spec
	idx     []int
	batches []*engine.ApplyBatch
	sem     chan struct{}
	wg      sync.WaitGroup
	// swapShard is the shard SWAPDB records apply to (-1: all).
	swapShard int
}

func (r *replayer) add(rc engine.Replicated) {
	if rc.Swap {
		for i := 0; i < r.m.g.N(); i++ {
			if r.swapShard < 0 || r.swapShard == i {
				r.addTo(i, rc)
			}
		}
		return
	}
	if rc.Slot < 0 && len(rc.Flush) > 1 && r.ownsAll(rc.Flush) {
		r.addTo(r.m.g.Of(rc.Flush[0]), rc)
		return
	}
	if rc.Slot < 0 {
		for _, s := range rc.Flush {
			r.addTo(r.m.g.Of(s), engine.Replicated{Flush: []int{s}, Slot: -1, DB: rc.DB})
		}
		return
	}
	r.addTo(r.m.g.Of(rc.Slot), rc)
}

// ownsAll reports whether one shard owns every slot of list.
func (r *replayer) ownsAll(list []int) bool {
	for _, s := range list {
		if r.m.g.Of(s) != r.m.g.Of(list[0]) {
			return false
		}
	}
	return true
}

func (r *replayer) addTo(i int, rc engine.Replicated) {
	b := r.batches[i]
	if b == nil {
		b = &engine.ApplyBatch{Offset: -1}
		r.batches[i] = b
	}
	b.Cmds = append(b.Cmds, rc)
	if len(b.Cmds) >= applyBatch {
		r.flush(i)
	}
}

func (r *replayer) flush(i int) {
	b := r.batches[i]
	if b == nil || len(b.Cmds) == 0 {
		return
	}
	r.batches[i] = nil
	r.sem <- struct{}{}
	r.wg.Add(1)
	b.Done = func() {
		<-r.sem
		r.wg.Done()
	}
	r.m.g.Apply(i, b)
}

func (r *replayer) flushAll() {
	for i := range r.batches {
		r.flush(i)
	}
	r.wg.Wait()
}

// spec finds the shard command a record names (nil when unknown).
func (r *replayer) spec(args [][]byte) *command.Spec {
	if sp, ok := r.specs[string(args[0])]; ok {
		return sp
	}
	sp := command.Lookup(args[0])
	cache := sp == nil || sp.Subcommands == nil
	if sp != nil && sp.Subcommands != nil && len(args) > 1 {
		if sub := sp.Sub(args[1]); sub != nil {
			sp = sub
		}
	}
	if sp != nil && (sp.Exec != command.Shard || !sp.Bound()) {
		sp = nil
	}
	if cache && len(r.specs) < 1024 {
		r.specs[string(args[0])] = sp
	}
	return sp
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
