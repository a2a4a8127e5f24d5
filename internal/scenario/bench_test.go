package scenario

import (
	"strconv"
	"testing"

	"github.com/showdownlab/showdown/load"
)

// BenchmarkBankIteration measures one iteration of the bank rematch
// scenario (7 steps: Request then Check each) against canned responses:
// the scenario's own cost per virtual-user iteration, without the network.
func BenchmarkBankIteration(b *testing.B) {
	b.Run("same ids", func(b *testing.B) { benchBank(b, false) })
	// New ids every iteration, as against a real bank: the URLs that hold
	// them change, and each changed URL is a new string.
	b.Run("new ids", func(b *testing.B) { benchBank(b, true) })
}

func benchBank(b *testing.B, newIDs bool) {
	sc := loadBank(&testing.T{}, "scenario.yaml", "http://127.0.0.1:8080")
	resps := []*load.Response{
		{Status: 200, RawHeader: []byte("Content-Type: application/json\r\n"), Body: []byte(`{"id":1041,"balance":400}`)},
		{Status: 200, RawHeader: []byte("Content-Type: application/json\r\n"), Body: []byte(`{"id":1042,"balance":300}`)},
		{Status: 200, Body: []byte(`{"balance":400}`)},
		{Status: 200, Body: []byte(`{"balance":300}`)},
		{Status: 200, Body: []byte(`{"id":77,"from_client_id":1041,"to_client_id":1042,"amount":10}`)},
		{Status: 200, Body: []byte(`{"balance":390}`)},
		{Status: 200, Body: []byte(`{"balance":310}`)},
	}
	u := sc.NewUser(1)
	var req load.Request
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for step := range resps {
			if newIDs && step < 2 {
				body := resps[step].Body[:0]
				body = append(body, `{"id":`...)
				body = strconv.AppendInt(body, int64(2*i+step), 10)
				resps[step].Body = append(body, `,"balance":400}`...)
			}
			req.Reset()
			if err := u.Request(i, step, &req); err != nil {
				b.Fatal(err)
			}
			if err := u.Check(i, step, resps[step]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
