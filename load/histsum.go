package load

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// v2HeaderSize is the size of the uncompressed V2 header: cookie, payload
// length, normalizing offset, significant digits, lowest and highest
// trackable values, conversion ratio.
const v2HeaderSize = 40

// histSum adds up compressed histograms (the .hlog payloads) without
// building a histogram per payload: counts of payloads that share the
// first payload's geometry are added index by index into one array,
// which is exact; a payload of another geometry is decoded and merged
// the ordinary way.
type histSum struct {
	lowest, highest int64
	digits          int32
	counts          []int64
	other           *hdrhistogram.Histogram
}

// histDecoder holds the buffers histSum.add reuses from one payload to
// the next.
type histDecoder struct {
	raw, plain bytes.Buffer
	zr         io.ReadCloser
}

// add adds one payload to s.
func (s *histSum) add(d *histDecoder, payload string) error {
	d.raw.Reset()
	d.raw.Grow(base64.StdEncoding.DecodedLen(len(payload)))
	raw := d.raw.Bytes()[:base64.StdEncoding.DecodedLen(len(payload))]
	n, err := base64.StdEncoding.Decode(raw, []byte(payload))
	if err != nil {
		return err
	}
	raw = raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw))&^0xf0 != hdrhistogram.V2CompressedEncodingCookieBase {
		return s.slow(payload)
	}
	clen := int(binary.BigEndian.Uint32(raw[4:]))
	if clen < 0 || clen > len(raw)-8 {
		return fmt.Errorf("compressed length %d of %d bytes", clen, len(raw)-8)
	}
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(bytes.NewReader(raw[8 : 8+clen])); err != nil {
			return err
		}
	} else if err := d.zr.(zlib.Resetter).Reset(bytes.NewReader(raw[8:8+clen]), nil); err != nil {
		return err
	}
	d.plain.Reset()
	if _, err := d.plain.ReadFrom(d.zr); err != nil {
		return err
	}
	b := d.plain.Bytes()
	if len(b) < v2HeaderSize || int32(binary.BigEndian.Uint32(b))&^0xf0 != hdrhistogram.V2EncodingCookieBase {
		return s.slow(payload)
	}
	plen := int(binary.BigEndian.Uint32(b[4:]))
	digits := int32(binary.BigEndian.Uint32(b[12:]))
	lowest, highest := int64(binary.BigEndian.Uint64(b[16:])), int64(binary.BigEndian.Uint64(b[24:]))
	if plen < 0 || plen != len(b)-v2HeaderSize {
		return fmt.Errorf("payload length %d of %d bytes", plen, len(b)-v2HeaderSize)
	}
	if s.counts == nil && s.other == nil {
		h := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: lowest, HighestTrackableValue: highest, SignificantFigures: int64(digits)})
		if h.LowestTrackableValue() != lowest || h.HighestTrackableValue() != highest || h.SignificantFigures() != int64(digits) {
			return s.slow(payload) // a geometry Import would change
		}
		s.lowest, s.highest, s.digits = lowest, highest, digits
		s.counts = make([]int64, len(h.Export().Counts))
	}
	if s.counts == nil || lowest != s.lowest || highest != s.highest || digits != s.digits {
		return s.slow(payload)
	}
	// ZigZag LEB128 counts; a negative value is a run of zeros. Counts
	// below 2^56 (every real one) encode as encoding/binary's varints.
	idx := 0
	for p := b[v2HeaderSize:]; len(p) > 0; {
		v, n := binary.Varint(p)
		if n <= 0 || n > 8 {
			return s.slow(payload)
		}
		p = p[n:]
		switch {
		case v < 0:
			if v == math.MinInt64 || -v > int64(len(s.counts)-idx) {
				return fmt.Errorf("zero run %d at index %d of %d", -v, idx, len(s.counts))
			}
			idx += int(-v)
		default:
			if idx >= len(s.counts) {
				return fmt.Errorf("index %d past %d counts", idx, len(s.counts))
			}
			s.counts[idx] += v
			idx++
		}
	}
	return nil
}

// slow decodes a payload into a histogram and merges it.
func (s *histSum) slow(payload string) error {
	h, err := hdrhistogram.Decode([]byte(payload))
	if err != nil {
		return err
	}
	if s.other == nil {
		s.other = h
		return nil
	}
	s.other.Merge(h)
	return nil
}

// histogram returns the sum, or nil if nothing was added.
func (s *histSum) histogram() *hdrhistogram.Histogram {
	var h *hdrhistogram.Histogram
	if s.counts != nil {
		h = hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: s.lowest, HighestTrackableValue: s.highest,
			SignificantFigures: int64(s.digits), Counts: s.counts, IntegerToDoubleConversionRatio: 1})
	}
	switch {
	case h == nil:
		return s.other
	case s.other != nil:
		h.Merge(s.other)
	}
	return h
}
