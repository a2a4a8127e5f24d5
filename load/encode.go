package load

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

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
	s := h.Export()
	counts := s.Counts
	last := len(counts) - 1
	for last >= 0 && counts[last] == 0 {
		last--
	}
	counts = counts[:last+1]
	// Counts: ZigZag LEB128, a negative number standing for a run of zeros.
	var body bytes.Buffer
	body.Grow(len(counts) / 4)
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
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	e.raw.Reset()
	be := func(v any) { binary.Write(&e.raw, binary.BigEndian, v) }
	be(int32(v2EncodingCookie))
	be(int32(body.Len()))
	be(int32(0)) // normalizing index offset
	be(int32(s.SignificantFigures))
	be(s.LowestTrackableValue)
	be(s.HighestTrackableValue)
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
