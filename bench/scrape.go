package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// scraper GETs a server's /metrics at a fixed rate, as Prometheus would
// (-scrape-hz), so that a run measures what scrapes cost the server.
type scraper struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	n, bad int
	bytes  int64
	took   time.Duration
}

func startScraper(ctx context.Context, port int, hz float64) *scraper {
	ctx, cancel := context.WithCancel(ctx)
	sc := &scraper{cancel: cancel}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	tick := time.NewTicker(time.Duration(float64(time.Second) / hz))
	sc.wg.Add(1)
	go func() {
		defer sc.wg.Done()
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			start := time.Now()
			resp, err := http.Get(url)
			if err != nil {
				sc.bad++
				continue
			}
			n, err := io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				sc.bad++
				continue
			}
			sc.n++
			sc.bytes += n
			sc.took += time.Since(start)
		}
	}()
	return sc
}

// stop ends the scrapes and says how they went.
func (sc *scraper) stop() string {
	sc.cancel()
	sc.wg.Wait()
	avg := time.Duration(0)
	if sc.n > 0 {
		avg = sc.took / time.Duration(sc.n)
	}
	return fmt.Sprintf("scrapes: %d ok (%d failed), %d bytes each on average, %v each on average",
		sc.n, sc.bad, sc.bytes/int64(max(sc.n, 1)), avg)
}
