package script

import (
	"context"
	"fmt"
	"testing"

	"github.com/slotd/slotd/netio/resp"
)

type nopHost struct{}

func (nopHost) Call(args [][]byte, w *resp.Writer) string { w.OK(); return "" }
func (nopHost) Known([][]byte) bool                      { return true }
func (nopHost) Log(int, string)                          {}

func TestScratchPanic(t *testing.T) {
	vm := NewVM()
	for _, src := range []string{"return #{unpack({}, 1, 1e7)}", "local function f(n) if n == 0 then return 0 end return 1 + f(n-1) end return f(200000)", "return 1"} {
		s, _ := Compile([]byte(src))
		s.SHA = "x"
		w := &resp.Writer{Proto: 2}
		func() {
			defer func() {
				if r := recover(); r != nil {
					fmt.Printf("PANIC %v\n", r)
				}
			}()
			vm.Run(context.Background(), s, nil, nil, nopHost{}, w)
		}()
		fmt.Printf("%q\n", w.B)
	}
}
