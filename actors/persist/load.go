package persist

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/slots"
)

// loadBatch is how many keys go to a shard in one message.
const loadBatch = 512

// Load reads the snapshot file, if there is one, into the shards (adding
// to what they hold, a key in the file replacing one of the same name).
// A missing file is not an error. Keys whose expiry has passed are left
// out, as a Redis primary does; shards in replica mode keep them (the
// primary deletes them), as a Redis replica does.
func (m *Manager) Load() error {
	b, err := os.ReadFile(m.Path())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", m.Path(), err)
	}
	m.loading.Store(true)
	defer m.loading.Store(false)
	start := time.Now()
	n, expired, err := m.loadBytes(b, m.g.Replica())
	if err != nil {
		return fmt.Errorf("loading %s: %w", m.Path(), err)
	}
	m.lastKeys.Store(int64(n))
	m.restoreRepl()
	m.log.Info().Msgf("Done loading RDB, keys loaded: %d, keys expired: %d.", n, expired)
	m.log.Info().Msgf("DB loaded from disk: %.3f seconds", time.Since(start).Seconds())
	return nil
}

// loadBytes parses a whole file and stores its keys, keepExpired those
// whose expiry has passed too.
func (m *Manager) loadBytes(b []byte, keepExpired bool) (loaded, expired int, err error) {
	f, ver, err := rdb.NewFileReader(b)
	if err != nil {
		return 0, 0, err
	}
	now := time.Now().UnixMilli()
	pending := make([][]engine.LoadedKey, m.g.N())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	flush := func(i int) {
		keys := pending[i]
		pending[i] = nil
		if len(keys) == 0 {
			return
		}
		wg.Add(1)
		m.g.LoadKeys(i, keys, func(c int, e error) {
			mu.Lock()
			loaded += c
			if e != nil && firstErr == nil {
				firstErr = e
			}
			mu.Unlock()
			wg.Done()
		})
	}
	fail := func(e error) (int, int, error) {
		wg.Wait()
		return 0, 0, fmt.Errorf("%w (at offset %d)", e, f.Pos())
	}
	expire, curDB := int64(0), 0
	var libs []string // function libraries' code
	loadDelay := m.cfg.Var("key-load-delay")
	for {
		op, err := f.Byte()
		if err != nil {
			return fail(errors.New("short read or OOM loading DB. Unrecoverable error, aborting now"))
		}
		switch op {
		case rdb.OpEOF:
			if ver >= 5 {
				pos := f.Pos()
				want, err := f.Uint64()
				if err != nil {
					return fail(errors.New("short read loading the checksum"))
				}
				if want != 0 && rdb.CRC64(0, b[:pos]) != want {
					return fail(errors.New("wrong RDB checksum"))
				}
			}
			for i := range pending {
				flush(i)
			}
			wg.Wait()
			if firstErr != nil {
				return loaded, expired, firstErr
			}
			if len(libs) > 0 {
				if err := m.g.Functions().Add(libs, script.RestoreReplace); err != nil {
					return 0, 0, fmt.Errorf("loading the function libraries: %w", err)
				}
			}
			return loaded, expired, nil
		case rdb.OpAux:
			k, err := f.String()
			if err != nil {
				return fail(err)
			}
			v, err := f.String()
			if err != nil {
				return fail(err)
			}
			if strings.HasPrefix(string(k), auxReplPrefix) {
				if m.loadedAux == nil {
					m.loadedAux = map[string]string{}
				}
				m.loadedAux[string(k)] = string(v)
			}
		case rdb.OpSelectDB:
			db, err := f.Len()
			if err != nil {
				return fail(err)
			}
			if db >= uint64(m.g.Databases()) {
				return fail(fmt.Errorf("FATAL: Data file was created with a Redis server configured to handle "+
					"more than %d databases. Exiting", m.g.Databases()))
			}
			curDB = int(db)
		case rdb.OpResizeDB:
			if _, err := f.Len(); err != nil {
				return fail(err)
			}
			if _, err := f.Len(); err != nil {
				return fail(err)
			}
		case rdb.OpExpireTimeMS:
			v, err := f.Uint64()
			if err != nil {
				return fail(err)
			}
			expire = int64(v)
		case rdb.OpExpireTime:
			v, err := f.Uint32()
			if err != nil {
				return fail(err)
			}
			expire = int64(v) * 1000
		case rdb.OpIdle:
			if _, err := f.Len(); err != nil {
				return fail(err)
			}
		case rdb.OpFreq:
			if _, err := f.Byte(); err != nil {
				return fail(err)
			}
		case rdb.OpFunction2, rdb.OpFunctionPreGA:
			code, err := script.ReadRecord(f, op)
			if err != nil {
				return fail(err)
			}
			libs = append(libs, code)
		case rdb.OpModuleAux:
			return fail(fmt.Errorf("unsupported RDB opcode %d (module data)", op))
		default:
			key, err := f.String()
			if err != nil {
				return fail(err)
			}
			key = append([]byte(nil), key...)
			KeyDelay(loadDelay.Int(), 1)
			o, err := f.Object(op)
			if err != nil {
				if errors.Is(err, rdb.ErrUnsupported) {
					return fail(fmt.Errorf("key %q has a value type slotd does not support (RDB type %d)", key, op))
				}
				return fail(err)
			}
			exp := expire
			expire = 0
			if exp != 0 && exp <= now && !keepExpired {
				expired++
				continue
			}
			slot := slots.HashSlot(key)
			i := m.g.Of(slot)
			pending[i] = append(pending[i], engine.LoadedKey{Slot: slot, DB: curDB, Key: key, Expire: exp, Obj: o})
			if len(pending[i]) >= loadBatch {
				flush(i)
			}
		}
	}
}

// Replication state in a snapshot (a replica's final one): aux fields
// slotd-repl-id and slotd-repl-offsets (per-shard offsets, comma
// separated). redis-server ignores aux fields it does not know.
const (
	auxReplPrefix  = "slotd-repl-"
	auxReplID      = auxReplPrefix + "id"
	auxReplOffsets = auxReplPrefix + "offsets"
)

func appendReplAux(b []byte, id string, offs []int64) []byte {
	parts := make([]string, len(offs))
	for i, o := range offs {
		parts[i] = strconv.FormatInt(o, 10)
	}
	for _, kv := range [][2]string{{auxReplID, id}, {auxReplOffsets, strings.Join(parts, ",")}} {
		b = append(b, rdb.OpAux)
		b = rdb.AppendString(b, kv[0], false)
		b = rdb.AppendString(b, kv[1], false)
	}
	return b
}

// restoreRepl hands the replication state of the loaded file, if any, to
// OnReplState.
func (m *Manager) restoreRepl() {
	aux := m.loadedAux
	m.loadedAux = nil
	id, list := aux[auxReplID], aux[auxReplOffsets]
	if m.OnReplState == nil || id == "" || list == "" {
		return
	}
	var offs []int64
	for _, p := range strings.Split(list, ",") {
		o, err := strconv.ParseInt(p, 10, 64)
		if err != nil || o < 0 {
			return
		}
		offs = append(offs, o)
	}
	m.OnReplState(id, offs)
}
