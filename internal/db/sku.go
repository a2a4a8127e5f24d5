package db

import (
	"bufio"
	"io"
	"strconv"

	"github.com/showdownlab/showdown/workloads"
)

// DefaultSKURows is how many rows Prepare loads into purch_sku_master: the source's 2,000,000.
const DefaultSKURows = workloads.DefaultSKURows

// DefaultSeed is the seed Prepare generates rows from unless told otherwise.
const DefaultSeed = workloads.DefaultSeed

// DefaultKnownSKUs is how many known sku_ids Prepare returns: the source used 10.
const DefaultKnownSKUs = 10

// skuIDBits bounds the sku_id permutation: row i gets a distinct sku_id
// in skuIDBase .. skuIDBase+2^skuIDBits-1 for every i < 2^skuIDBits.
const (
	skuIDBits = 33
	skuIDMask = 1<<skuIDBits - 1
	skuIDBase = 100_000_000
)

// SKURow is one generated row of purch_sku_master.
type SKURow struct {
	ID      int64
	MemID   int32
	MemCode string
	SKUID   int64
	SKUCode string
	Item    string
	SKUName string
	SKUAbbr string
}

// skuGen generates rows deterministically: row i depends only on the seed
// and i, so any row can be computed on its own (the known sku_ids) and the
// same seed always gives the same table.
type skuGen struct {
	seed       uint64
	k0, m1, m2 uint64 // the sku_id permutation's keys
}

func newSKUGen(seed int64) skuGen {
	g := skuGen{seed: splitmix(uint64(seed) ^ 0x5deece66d)}
	g.k0 = splitmix(g.seed+1) & skuIDMask
	g.m1 = splitmix(g.seed+2)&skuIDMask | 1
	g.m2 = splitmix(g.seed+3)&skuIDMask | 1
	return g
}

// splitmix is SplitMix64's output function: a good 64-bit mixer.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// skuID maps row i to its sku_id through a keyed bijection on 33 bits
// (add, xorshift, odd multiply: each step is invertible), so sku_ids are
// unique and look random.
func (g skuGen) skuID(i int) int64 {
	x := (uint64(i) + g.k0) & skuIDMask
	x ^= x >> 17
	x = x * g.m1 & skuIDMask
	x ^= x >> 13
	x = x * g.m2 & skuIDMask
	x ^= x >> 16
	return skuIDBase + int64(x)
}

var (
	skuBrands   = []string{"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Wonka", "Tyrell", "Soylent", "Hooli", "Vandelay", "Cyberdyne", "Oscorp", "Gringotts", "Duff", "Nakatomi"}
	skuItems    = []string{"Coffee Beans", "Green Tea", "Olive Oil", "Basmati Rice", "Pasta", "Tomato Sauce", "Dark Chocolate", "Oat Milk", "Peanut Butter", "Honey", "Sea Salt", "Black Pepper", "Flour", "Sugar", "Dish Soap", "Laundry Powder", "Paper Towels", "Toothpaste", "Shampoo", "Hand Cream", "Batteries", "Light Bulb", "Notebook", "Ballpoint Pen", "Dog Food", "Cat Litter", "Sparkling Water", "Orange Juice", "Granola", "Crackers", "Soy Sauce", "Vinegar"}
	skuVariants = []string{"Classic", "Organic", "Extra", "Light", "Premium", "Value", "Family", "Original", "Zero", "Mild", "Strong", "Fresh"}
	skuSizes    = []string{"100g", "250g", "500g", "1kg", "2kg", "250ml", "500ml", "1l", "2l", "6pk", "12pk", "24pk"}
)

// abbr is a word list's upper-case initials: "Coffee Beans" -> "CB".
func abbr(s string) string {
	b := []byte{}
	for i := 0; i < len(s); i++ {
		if i == 0 || s[i-1] == ' ' {
			c := s[i]
			if c >= 'a' && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
		}
	}
	return string(b)
}

var skuItemAbbr = func() []string {
	a := make([]string, len(skuItems))
	for i, s := range skuItems {
		a[i] = abbr(s)
	}
	return a
}()

// parts draws row i's random choices.
func (g skuGen) parts(i int) (memID int32, code uint64, brand, item, variant, size int) {
	r := splitmix(g.seed ^ uint64(i)*0x9e3779b97f4a7c15)
	r2 := splitmix(r)
	memID = int32(1 + r%5000)
	code = r2 & 0xffffffffff // 40 bits: 10 hex digits
	brand = int(r>>16) % len(skuBrands)
	item = int(r>>24) % len(skuItems)
	variant = int(r>>32) % len(skuVariants)
	size = int(r>>40) % len(skuSizes)
	return
}

// Row returns row i (0-based) of the table; its id is i+1.
func (g skuGen) Row(i int) SKURow {
	return parseRow(string(g.appendRow(nil, i)))
}

// appendRow appends row i as a tab-separated line in the column order of
// skuColumns. No generated string holds a tab, newline or backslash.
func (g skuGen) appendRow(b []byte, i int) []byte {
	memID, code, brand, item, variant, size := g.parts(i)
	b = strconv.AppendInt(b, int64(i)+1, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(memID), 10)
	b = append(b, "\tMEM"...)
	b = appendPadded(b, uint64(memID), 10, 6)
	b = append(b, '\t')
	b = strconv.AppendInt(b, g.skuID(i), 10)
	b = append(b, "\tSKU-"...)
	b = appendPadded(b, code, 16, 10)
	b = append(b, '\t')
	b = append(b, skuItems[item]...)
	b = append(b, '\t')
	b = append(b, skuBrands[brand]...)
	b = append(b, ' ')
	b = append(b, skuItems[item]...)
	b = append(b, ' ')
	b = append(b, skuVariants[variant]...)
	b = append(b, ' ')
	b = append(b, skuSizes[size]...)
	b = append(b, '\t')
	b = append(b, skuBrands[brand][:3]...)
	b = append(b, '-')
	b = append(b, skuItemAbbr[item]...)
	b = append(b, '-')
	b = append(b, skuVariants[variant][:2]...)
	b = append(b, '-')
	b = append(b, skuSizes[size]...)
	return append(b, '\n')
}

// skuColumns is the column order of appendRow's lines.
const skuColumns = "id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr"

// appendPadded appends v in base (10 or 16, upper case) with at least width digits.
func appendPadded(b []byte, v uint64, base, width int) []byte {
	var tmp [24]byte
	s := strconv.AppendUint(tmp[:0], v, base)
	for n := len(s); n < width; n++ {
		b = append(b, '0')
	}
	for _, c := range s {
		if c >= 'a' && c <= 'f' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

func parseRow(line string) SKURow {
	f := make([]string, 0, 8)
	start := 0
	for i := 0; i < len(line); i++ {
		if line[i] == '\t' || line[i] == '\n' {
			f = append(f, line[start:i])
			start = i + 1
		}
	}
	id, _ := strconv.ParseInt(f[0], 10, 64)
	mem, _ := strconv.ParseInt(f[1], 10, 32)
	sku, _ := strconv.ParseInt(f[3], 10, 64)
	return SKURow{ID: id, MemID: int32(mem), MemCode: f[2], SKUID: sku, SKUCode: f[4], Item: f[5], SKUName: f[6], SKUAbbr: f[7]}
}

// WriteSKURows writes rows 0..n-1 generated from seed to w as tab-separated
// lines (columns id, mem_id, mem_code, sku_id, sku_code, item, sku_name,
// sku_abbr), the form Prepare bulk-loads.
func WriteSKURows(w io.Writer, seed int64, n int) error {
	g := newSKUGen(seed)
	bw := bufio.NewWriterSize(w, 1<<20)
	buf := make([]byte, 0, 256)
	for i := 0; i < n; i++ {
		buf = g.appendRow(buf[:0], i)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SKURowAt returns row i (0-based, id i+1) of the table generated from seed.
func SKURowAt(seed int64, i int) SKURow { return newSKUGen(seed).Row(i) }

// KnownSKUIDs returns k distinct sku_ids among the first n rows generated
// from seed, chosen deterministically from the seed (all n when k >= n).
func KnownSKUIDs(seed int64, n, k int) []int64 {
	if k > n {
		k = n
	}
	g := newSKUGen(seed)
	out := make([]int64, 0, k)
	seen := map[int]bool{}
	for j := uint64(0); len(out) < k; j++ {
		i := int(splitmix(g.seed^0xa5a5a5a5^j) % uint64(n))
		if k*2 > n { // dense: walk in order instead of sampling
			i = int(j)
		}
		if seen[i] {
			continue
		}
		seen[i] = true
		out = append(out, g.skuID(i))
	}
	return out
}
