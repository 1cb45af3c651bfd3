package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The live cluster page (metrics-port, GET /) in headless Chromium, as a
// user sees it: a 3+3 cluster's six nodes with their roles and slot
// ranges, a slot map whose colours are the owners' of CLUSTER SHARDS, and
// a failover showing up live (the killed primary flagged failing, its
// replica turned primary with its slots, the FAIL in the events) without
// reloading the page. Screenshots before and after the failover are saved
// under $SLOTD_SCREENSHOT_DIR (default: the temp dir) and their paths
// logged (go test -v -run TestClusterPageInChromium ./cmd/slotd/).

// pageView is what the page shows, read from its DOM and canvas in one
// evaluation (the page redraws every second).
type pageView struct {
	Updated string    `json:"updated"`
	State   string    `json:"state"`
	Rows    []pageRow `json:"rows"`
	Events  []string  `json:"events"`
	// Pixels are the slot map's colours, slot by slot ("r,g,b").
	Pixels []string `json:"pixels"`
}

type pageRow struct {
	ID     string   `json:"id"`
	Cells  []string `json:"cells"` // node, address, role, of, config epoch, slots, flags, link
	Swatch string   `json:"swatch"`
}

const readPage = `(() => {
  const rows = [...document.querySelectorAll("#nodes tbody tr")].map(tr => ({
    id: tr.dataset.id, cells: [...tr.cells].map(c => c.textContent),
    swatch: getComputedStyle(tr.querySelector(".sw")).backgroundColor}));
  const g = document.getElementById("slots").getContext("2d");
  const d = g.getImageData(0, 0, 512, 512).data, pixels = [];
  for (let s = 0; s < 16384; s++) {
    const i = ((Math.floor(s / 128) * 4 + 1) * 512 + (s % 128) * 4 + 1) * 4;
    pixels.push(d[i] + "," + d[i + 1] + "," + d[i + 2]);
  }
  return {updated: document.body.dataset.updated || "", state: document.getElementById("state").textContent,
    rows, pixels, events: [...document.querySelectorAll("#events div")].map(e => e.textContent)};
})()`

func (v pageView) row(id string) (pageRow, bool) {
	for _, r := range v.Rows {
		if r.ID == id {
			return r, true
		}
	}
	return pageRow{}, false
}

// rgb reads "r,g,b" or CSS's "rgb(r, g, b)".
func rgb(s string) [3]int {
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "rgba("), "rgb("), ")")
	var c [3]int
	for i, f := range strings.SplitN(s, ",", 4) {
		if i < 3 {
			c[i], _ = strconv.Atoi(strings.TrimSpace(f))
		}
	}
	return c
}

func near(a, b [3]int) bool {
	for i := range a {
		if d := a[i] - b[i]; d > 2 || d < -2 {
			return false
		}
	}
	return true
}

// checkSlotMap asserts that every slot's cell has the colour of the row
// of its owner in CLUSTER SHARDS (as read from addr), that the owners'
// colours differ, and that each owner's row lists its slot ranges.
func checkSlotMap(t *testing.T, v pageView, owners map[int]string, ranges map[string][]string) {
	t.Helper()
	colour := map[string][3]int{}
	for id := range ranges {
		r, ok := v.row(id)
		require.True(t, ok, "a row for %s on the page", id)
		colour[id] = rgb(r.Swatch)
		for _, rg := range ranges[id] {
			assert.Contains(t, r.Cells[5], rg, "the slots cell of %s lists %s", id[:8], rg)
		}
	}
	for a, ca := range colour {
		for b, cb := range colour {
			if a < b {
				assert.False(t, near(ca, cb), "owners %s and %s have different colours", a[:8], b[:8])
			}
		}
	}
	require.Len(t, v.Pixels, 16384)
	wrong := 0
	for s, px := range v.Pixels {
		if !near(rgb(px), colour[owners[s]]) {
			if wrong++; wrong <= 5 {
				t.Errorf("slot %d is drawn %s, its owner %s's colour is %v", s, px, owners[s][:8], colour[owners[s]])
			}
		}
	}
	assert.Zero(t, wrong, "slots drawn in another colour than their owner's")
}

// shardsOf reads CLUSTER SHARDS from addr: each slot's owner and each
// owner's ranges as the page writes them ("0-5460", "5461").
func shardsOf(t *testing.T, addr string) (map[int]string, map[string][]string) {
	t.Helper()
	cli := clientFor(addr)
	defer cli.Close()
	shards, err := cli.ClusterShards(bg).Result()
	require.NoError(t, err)
	owners, ranges := map[int]string{}, map[string][]string{}
	for _, sh := range shards {
		if len(sh.Slots) == 0 {
			continue
		}
		primary := ""
		for _, n := range sh.Nodes {
			if n.Role == "master" {
				primary = n.ID
			}
		}
		require.NotEmpty(t, primary, "shard %v has a primary", sh.Slots)
		for _, r := range sh.Slots {
			for s := r.Start; s <= r.End; s++ {
				owners[int(s)] = primary
			}
			rg := strconv.FormatInt(r.Start, 10)
			if r.End != r.Start {
				rg += "-" + strconv.FormatInt(r.End, 10)
			}
			ranges[primary] = append(ranges[primary], rg)
		}
	}
	require.Len(t, owners, 16384, "CLUSTER SHARDS covers every slot")
	return owners, ranges
}

// waitPage polls the page until cond holds on what it shows.
func waitPage(t *testing.T, b *browser, d time.Duration, what string, cond func(pageView) bool) pageView {
	t.Helper()
	var v pageView
	var last error
	deadline := time.Now().Add(d)
	for {
		if last = b.tryEval(readPage, &v); last == nil && cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: the page shows %s (last read error %v); it shows state %q, rows %v, events %v",
				d, what, last, v.State, v.Rows, v.Events)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freshPage waits for a redraw from data read after now.
func freshPage(t *testing.T, b *browser, what string, cond func(pageView) bool) pageView {
	t.Helper()
	after := time.Now().UnixMilli()
	return waitPage(t, b, 15*time.Second, what, func(v pageView) bool {
		u, _ := strconv.ParseInt(v.Updated, 10, 64)
		return u > after && cond(v)
	})
}

func screenshotPath(t *testing.T, name string) string {
	dir := os.Getenv("SLOTD_SCREENSHOT_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return filepath.Join(dir, fmt.Sprintf("slotd-cluster-page-%s-%s.png", time.Now().UTC().Format("20060102T150405"), name))
}

func TestClusterPageInChromium(t *testing.T) {
	needTools(t, "redis-cli")
	bin := chromium(t)
	mbase := freePorts(t, 6)
	procs, addrs := createEach(t, "slotd", 3, func(i int) []string {
		return []string{"--metrics-port", strconv.Itoa(mbase + i)}
	}, "--trace-actors", "cluster")
	tp := readTopology(t, clientFor(addrs[0]))
	// The victim is a primary with a replica; the page is served by
	// another primary.
	var victimID, replicaAddr string
	for id := range tp.primaries {
		if len(tp.replicas[id]) > 0 {
			victimID, replicaAddr = id, tp.replicas[id][0]
			break
		}
	}
	require.NotEmpty(t, victimID)
	idOf := map[string]string{}
	for id, a := range tp.addrOf {
		idOf[a] = id
	}
	page := -1
	var victim *proc
	for i, p := range procs {
		switch id := idOf[p.addr()]; {
		case id == victimID:
			victim = p
		case page < 0 && tp.primaries[id] != "":
			page = i
		}
	}
	require.NotNil(t, victim)
	require.GreaterOrEqual(t, page, 0)
	url := "http://127.0.0.1:" + strconv.Itoa(mbase+page) + "/"
	b := startBrowser(t, bin, url)

	owners, ranges := shardsOf(t, addrs[page])
	v := freshPage(t, b, "the six nodes", func(v pageView) bool { return len(v.Rows) == 6 })
	assert.Equal(t, "cluster_state ok", v.State)
	for id, addr := range tp.addrOf {
		r, ok := v.row(id)
		require.True(t, ok, "a row for node %s", addr)
		assert.Equal(t, addr, r.Cells[1], "the address of %s", id[:8])
		role := "replica"
		if tp.primaries[id] != "" {
			role = "primary"
		}
		assert.Equal(t, role, r.Cells[2], "the role of %s", addr)
	}
	checkSlotMap(t, v, owners, ranges)
	before := screenshotPath(t, "before")
	b.screenshot(t, before)
	t.Logf("screenshot of the cluster page before the failover: %s", before)

	replicaID := idOf[replicaAddr]
	victim.kill()
	v = waitPage(t, b, 60*time.Second, "the killed primary's replica as primary with its slots", func(v pageView) bool {
		r, ok := v.row(replicaID)
		old, ok2 := v.row(victimID)
		return ok && ok2 && r.Cells[2] == "primary" && r.Cells[5] != "0" && strings.Contains(old.Cells[6], "fail") &&
			old.Cells[5] == "0"
	})
	t.Logf("the page shows %s promoted: %v", replicaAddr, v.Rows)
	owners, ranges = shardsOf(t, addrs[page])
	require.Contains(t, ranges, replicaID, "CLUSTER SHARDS names the promoted replica")
	v = freshPage(t, b, "the slot map after the failover", func(pageView) bool { return true })
	checkSlotMap(t, v, owners, ranges)
	events := strings.Join(v.Events, "\n")
	assert.Contains(t, events, "event FAIL "+victimID[:8], "the page's events show the FAIL")
	after := screenshotPath(t, "after")
	b.screenshot(t, after)
	t.Logf("screenshot of the cluster page after the failover: %s", after)
}
