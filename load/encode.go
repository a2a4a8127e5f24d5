package load

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"reflect"
	"sync"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Cookies of the HdrHistogram V2 encoding.
const (
	v2EncodingCookie           = 0x1c849303 | 0x10
	v2CompressedEncodingCookie = 0x1c849304 | 0x10
)

// histEncoder writes the standard compressed V2 encoding of a histogram
// (what hdrhistogram.Decode and every HdrHistogram port read) with
// reusable buffers: hdrhistogram-go's own encoder allocates once per
// bucket and a fresh compressor per call, which at one encoding per label
// per second costs more garbage than the requests themselves.
type histEncoder struct {
	mu     sync.Mutex
	raw    bytes.Buffer
	zbuf   bytes.Buffer
	out    bytes.Buffer
	body   bytes.Buffer
	zw     *zlib.Writer
	varint [binary.MaxVarintLen64]byte
}

var encoder histEncoder

func encodeHist(h *hdrhistogram.Histogram) string {
	return encoder.encode(h)
}

func (e *histEncoder) encode(h *hdrhistogram.Histogram) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	counts, ratio := histView(h)
	last := len(counts) - 1
	for last >= 0 && counts[last] == 0 {
		last--
	}
	counts = counts[:last+1]
	// Counts: ZigZag LEB128, a negative number standing for a run of zeros.
	body := &e.body
	body.Reset()
	for i := 0; i < len(counts); {
		v := counts[i]
		i++
		if v == 0 {
			zeros := int64(1)
			for i < len(counts) && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				v = -zeros
			}
		}
		n := binary.PutVarint(e.varint[:], v) // ZigZag + LEB128, as HdrHistogram
		body.Write(e.varint[:n])
	}
	if ratio == 0 {
		ratio = 1
	}
	e.raw.Reset()
	be := func(v any) { binary.Write(&e.raw, binary.BigEndian, v) }
	be(int32(v2EncodingCookie))
	be(int32(body.Len()))
	be(int32(0)) // normalizing index offset
	be(int32(h.SignificantFigures()))
	be(h.LowestTrackableValue())
	be(h.HighestTrackableValue())
	be(math.Float64bits(ratio))
	e.raw.Write(body.Bytes())

	e.zbuf.Reset()
	if e.zw == nil {
		e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.DefaultCompression)
	} else {
		e.zw.Reset(&e.zbuf)
	}
	e.zw.Write(e.raw.Bytes())
	e.zw.Close()

	e.out.Reset()
	binary.Write(&e.out, binary.BigEndian, int32(v2CompressedEncodingCookie))
	binary.Write(&e.out, binary.BigEndian, int32(e.zbuf.Len()))
	e.out.Write(e.zbuf.Bytes())
	return base64.StdEncoding.EncodeToString(e.out.Bytes())
}

// histFields are the offsets of hdrhistogram.Histogram's counts array
// and conversion ratio, found by reflection once; ok is false if the
// dependency's layout no longer has them with these types (then
// histView copies, through Export).
var histFields = func() (f struct {
	counts, ratio uintptr
	ok            bool
}) {
	t := reflect.TypeFor[hdrhistogram.Histogram]()
	c, ok1 := t.FieldByName("counts")
	r, ok2 := t.FieldByName("conversionRatio")
	f.counts, f.ratio = c.Offset, r.Offset
	f.ok = ok1 && ok2 && c.Type == reflect.TypeFor[[]int64]() && r.Type == reflect.TypeFor[float64]()
	return f
}()

// histView returns h's counts, index by index as Export's, and its
// conversion ratio (0 for the default), without a copy where the layout
// allows: the caller must not change the counts. The copy cost more than
// the encoding: a once-a-second interval histogram's Export allocated
// 188 KB, five a second, whose fresh pages cost the generator 5% of its
// CPU at 1,000 requests a second.
func histView(h *hdrhistogram.Histogram) (counts []int64, ratio float64) {
	if !histFields.ok {
		s := h.Export()
		return s.Counts, s.IntegerToDoubleConversionRatio
	}
	p := unsafe.Pointer(h)
	return *(*[]int64)(unsafe.Add(p, histFields.counts)), *(*float64)(unsafe.Add(p, histFields.ratio))
}
