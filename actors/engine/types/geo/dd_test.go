package geo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigSin evaluates sin(x) by its series in 300-bit arithmetic.
func bigSinCos(x float64) (float64, float64) {
	const prec = 300
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	x2 := new(big.Float).SetPrec(prec).Mul(bx, bx)
	sin, cos := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec)
	term := new(big.Float).SetPrec(prec).Set(bx) // x^(2k+1)/(2k+1)!
	cterm := new(big.Float).SetPrec(prec).SetInt64(1)
	for k := 0; k < 80; k++ {
		if k%2 == 0 {
			sin.Add(sin, term)
			cos.Add(cos, cterm)
		} else {
			sin.Sub(sin, term)
			cos.Sub(cos, cterm)
		}
		term.Mul(term, x2)
		term.Quo(term, new(big.Float).SetInt64(int64((2*k+2)*(2*k+3))))
		cterm.Mul(cterm, x2)
		cterm.Quo(cterm, new(big.Float).SetInt64(int64((2*k+1)*(2*k+2))))
	}
	s, _ := sin.Float64()
	c, _ := cos.Float64()
	return s, c
}

// TestCorrectlyRoundedTrig checks sin and cos against 300-bit references
// over the arguments distances use.
func TestCorrectlyRoundedTrig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		x := (r.Float64()*2 - 1) * math.Pi
		s, c := bigSinCos(x)
		if got := crSin(x); got != s {
			t.Fatalf("sin(%v) = %v, want %v", x, got, s)
		}
		if got := crCos(x); got != c {
			t.Fatalf("cos(%v) = %v, want %v", x, got, c)
		}
	}
	// the case Go's math.Cos rounds the other way
	if got := crCos(37 * degToRad); got != 0.79863551004729283 {
		t.Fatalf("cos(37°) = %.17g", got)
	}
}

func TestScoreAndDecode(t *testing.T) {
	// Redis: GEOADD k 13.361389 38.115556 Palermo → score 3479099956230698.
	if got := Score(13.361389, 38.115556); got != 3479099956230698 {
		t.Fatalf("score %v", got)
	}
	lon, lat, ok := Decode(3479099956230698)
	if !ok || string(AppendHuman(nil, lon)) != "13.36138933897018433" || string(AppendHuman(nil, lat)) != "38.11555639549629859" {
		t.Fatalf("decode %v %v", string(AppendHuman(nil, lon)), string(AppendHuman(nil, lat)))
	}
	if s, _ := String(3479099956230698); s != "sqc8b49rny0" {
		t.Fatalf("geohash %s", s)
	}
	lon2, lat2, _ := Decode(Score(15.087269, 37.502669))
	if d := string(AppendDistance(nil, Distance(lon, lat, lon2, lat2))); d != "166274.1516" {
		t.Fatalf("distance %s", d)
	}
}
