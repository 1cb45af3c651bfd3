package engine

import "testing"

// goClass answers the Go allocator's size class of every size up to 32 KiB
// (and whole pages beyond), as a search of the class list would.
func TestGoClassMatchesClassList(t *testing.T) {
	for n := int64(-1); n <= 70000; n++ {
		want := int64(0)
		switch {
		case n > 32768:
			want = (n + 8191) &^ 8191
		case n > 0:
			for _, c := range goClassSizes {
				if c >= n {
					want = c
					break
				}
			}
		}
		if got := goClass(n); got != want {
			t.Fatalf("goClass(%d) = %d, want %d", n, got, want)
		}
	}
}
