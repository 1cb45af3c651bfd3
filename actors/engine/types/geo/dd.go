package geo

import "math"

// Correctly rounded sin, cos and asin, evaluated in double-double
// arithmetic (about 106 bits) and rounded once. Redis computes distances
// with glibc's libm, which is within about half a unit in the last place
// but not always correctly rounded, and Go's math package is within one:
// neither matches glibc bit for bit. Rounding correctly keeps distances
// deterministic and as close to glibc's as an independent implementation
// gets; a STOREDIST score (17 significant digits) can still differ from
// Redis's in its last digit now and then. Replies with WITHDIST (four
// decimals) and orderings by distance are not affected in practice.

type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// divInt divides by a small integer.
func (a dd) divInt(n float64) dd {
	q1 := a.hi / n
	r := a.add(twoProd(q1, n).neg())
	q2 := r.hi / n
	return quickTwoSum(q1, q2)
}

// invFact[k] is 1/k! in double-double.
var invFact = func() [32]dd {
	var f [32]dd
	f[0] = dd{1, 0}
	for k := 1; k < len(f); k++ {
		f[k] = f[k-1].divInt(float64(k))
	}
	return f
}()

// halfPi is π/2 as a sum of three doubles.
var halfPi = [3]float64{1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33}

// reduce returns r = x - k·π/2 (|r| ≤ ~π/4) and k mod 4, for moderate x.
func reduce(x float64) (dd, int) {
	k := math.Round(x / halfPi[0])
	r := twoSum(x, -k*halfPi[0]) // k·halfPi[0] is exact for the small k used here
	r = r.add(twoProd(-k, halfPi[1]))
	r = r.add(dd{-k * halfPi[2], 0})
	return r, int(int64(k)) & 3
}

// sinCosDD evaluates sin and cos of a reduced argument by their series.
func sinCosDD(r dd) (s, c dd) {
	r2 := r.mul(r)
	s = invFact[29]
	for k := 27; k >= 1; k -= 2 {
		s = s.mul(r2)
		if (k/2)%2 == 1 {
			s = s.add(invFact[k].neg())
		} else {
			s = s.add(invFact[k])
		}
	}
	s = s.mul(r)
	c = invFact[30]
	for k := 28; k >= 0; k -= 2 {
		c = c.mul(r2)
		if (k/2)%2 == 1 {
			c = c.add(invFact[k].neg())
		} else {
			c = c.add(invFact[k])
		}
	}
	return s, c
}

func sinCos(x float64) (s, c dd) {
	r, q := reduce(x)
	sr, cr := sinCosDD(r)
	switch q {
	case 0:
		return sr, cr
	case 1:
		return cr, sr.neg()
	case 2:
		return sr.neg(), cr.neg()
	}
	return cr.neg(), sr
}

func crSin(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Sin(x)
	}
	s, _ := sinCos(x)
	return s.hi + s.lo
}

func crCos(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Cos(x)
	}
	_, c := sinCos(x)
	return c.hi + c.lo
}

// crAsin refines math.Asin by one Newton step in double-double.
func crAsin(v float64) float64 {
	y := math.Asin(v)
	if v == 0 || math.IsNaN(y) || math.Abs(v) >= 1 {
		return y
	}
	s, c := sinCos(y)
	if c.hi == 0 {
		return y
	}
	// y1 = y - (sin y - v) / cos y
	diff := s.add(dd{-v, 0})
	corr := diff.hi / c.hi
	return twoSum(y, -corr).hi + twoSum(y, -corr).lo
}
