package cmdtest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// spreadNames are four keys named prefix0..3, checked to live in at least
// three different shard actors of a 4-actor node.
func spreadNames(t *testing.T, prefix string) []string {
	var ks []string
	shards := map[int]bool{}
	for i := range 4 {
		k := prefix + strconv.Itoa(i)
		ks = append(ks, k)
		shards[slots.HashSlot([]byte(k))%4] = true
	}
	require.GreaterOrEqual(t, len(shards), 3, "keys %v", ks)
	return ks
}

// TestSpreadCommandsReplicaAndAOF: multi-key commands over keys of several
// shard actors (standalone) run atomically, and a replica and an AOF
// reload end equal to the primary. Six go-redis clients move 40 set
// members with SMOVE, 40 list elements with LMOVE/RPOPLPUSH and one token
// key with RENAME between keys of different shards, while STORE commands,
// COPY (to database 0 and 3),
// PFMERGE, BITOP and MSETNX write more keys from them; nothing is
// lost or duplicated (readers in EXISTS and MULTI/EXEC never see a move
// half done), and DEBUG DIGEST of the replica and of the primary
// restarted from its AOF equal the primary's.
func TestSpreadCommandsReplicaAndAOF(t *testing.T) {
	dir := t.TempDir()
	opts := []string{"dir", dir, "appendonly", "yes", "shard-actors", "4", "enable-debug-command", "yes"}
	p := nodetest.Start(t, opts...)
	r := nodetest.Start(t, "shard-actors", "4", "enable-debug-command", "yes", "replicaof", "127.0.0.1 "+strconv.Itoa(p.Port))
	pc, rc := p.Client(t), r.Client(t)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return nodetest.InfoField(t, rc, "replication", "master_link_status") == "up"
	}, "replica linked")

	sets, lists, toks := spreadNames(t, "set"), spreadNames(t, "list"), spreadNames(t, "tok")
	zs, strs := spreadNames(t, "zs"), spreadNames(t, "str")
	for i := range 40 {
		require.NoError(t, pc.SAdd(dbCtx, sets[i%4], i).Err())
		require.NoError(t, pc.RPush(dbCtx, lists[i%4], i).Err())
		require.NoError(t, pc.ZAdd(dbCtx, zs[i%4], redis.Z{Score: float64(i), Member: i}).Err())
		require.NoError(t, pc.PFAdd(dbCtx, "hll"+strconv.Itoa(i%4), i).Err())
	}
	require.NoError(t, pc.Set(dbCtx, toks[0], "token", 0).Err())
	for i, k := range strs {
		require.NoError(t, pc.Set(dbCtx, k, fmt.Sprint("v", i), 0).Err())
	}

	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := p.Client(t, 2+w%2)
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			pick := func(ks []string) string { return ks[rng.IntN(len(ks))] }
			for range 250 {
				var err error
				switch rng.IntN(10) {
				case 0, 1:
					err = c.SMove(dbCtx, pick(sets), pick(sets), rng.IntN(40)).Err()
				case 2:
					err = c.LMove(dbCtx, pick(lists), pick(lists), "LEFT", "RIGHT").Err()
				case 3:
					err = c.RPopLPush(dbCtx, pick(lists), pick(lists)).Err()
				case 4:
					err = c.Rename(dbCtx, pick(toks), pick(toks)).Err()
					if err != nil && err.Error() == "ERR no such key" {
						err = nil
					}
				case 5:
					err = c.ZUnionStore(dbCtx, pick(zs), &redis.ZStore{Keys: []string{pick(zs), pick(zs)}, Aggregate: "MAX"}).Err()
				case 6:
					err = c.SUnionStore(dbCtx, "u"+pick(sets), pick(sets), pick(sets)).Err()
				case 7:
					err = c.Copy(dbCtx, pick(strs), "c"+pick(strs), 3*rng.IntN(2), true).Err() // COPY ... DB 3 too
				case 8:
					err = c.PFMerge(dbCtx, "m"+pick(strs), "hll0", "hll1", "hll2", "hll3").Err()
				default:
					err = c.BitOpOr(dbCtx, "b"+pick(strs), pick(strs), pick(strs)).Err()
					if err == nil {
						err = c.MSetNX(dbCtx, "n"+pick(strs), "1", "n"+pick(strs), "2").Err()
					}
				}
				if err != nil && err != redis.Nil {
					t.Errorf("client %d: %v", w, err)
					return
				}
			}
		}()
	}
	// Readers see every move whole: one token, 40 members, 40 elements.
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	var reads [2]int
	for w := range 2 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			c := p.Client(t, 2+w)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if n := c.Exists(dbCtx, toks...).Val(); n != 1 {
					t.Errorf("EXISTS over the token keys: %d", n)
					return
				}
				cmds, err := c.TxPipelined(dbCtx, func(tx redis.Pipeliner) error {
					for i := range 4 {
						tx.SCard(dbCtx, sets[i])
						tx.LLen(dbCtx, lists[i])
					}
					return nil
				})
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				var members, elems int64
				for i, cmd := range cmds {
					if i%2 == 0 {
						members += cmd.(*redis.IntCmd).Val()
					} else {
						elems += cmd.(*redis.IntCmd).Val()
					}
				}
				if members != 40 || elems != 40 {
					t.Errorf("a transaction saw %d members and %d list elements", members, elems)
					return
				}
				reads[w]++
			}
		}()
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	t.Logf("consistent reads: %v", reads)

	// Nothing lost or duplicated.
	seen := map[string]int{}
	for _, k := range sets {
		for _, m := range pc.SMembers(dbCtx, k).Val() {
			seen[m]++
		}
	}
	assert.Len(t, seen, 40)
	for m, n := range seen {
		assert.Equal(t, 1, n, "member %s", m)
	}
	var total int64
	for _, k := range lists {
		total += pc.LLen(dbCtx, k).Val()
	}
	assert.Equal(t, int64(40), total)
	assert.Equal(t, int64(1), pc.Exists(dbCtx, toks...).Val())

	want := pc.Do(dbCtx, "debug", "digest").Val()
	require.NotEqual(t, "0000000000000000000000000000000000000000", want)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return rc.Do(dbCtx, "debug", "digest").Val() == want
	}, "replica digest equals the primary's")

	p.Stop()
	p2 := nodetest.Start(t, opts...)
	assert.Equal(t, want, p2.Client(t).Do(dbCtx, "debug", "digest").Val(), "AOF reload")
}
