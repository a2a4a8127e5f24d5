package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// bankFixture holds the clients the bank checks create and the balances
// they must have, given every transfer the service accepted.
type bankFixture struct {
	mu      sync.Mutex
	ids     map[string]int64 // "a", "b", "c" -> client id
	balance map[int64]int64  // client id -> expected balance
	err     error            // why the fixture is not ready
}

// Balances the fixture's clients start with.
const (
	bankA = 1000 // the payer of most transfers
	bankB = 0    // a client created with nothing
	bankC = 5    // a client that spends exactly all it has
)

func (fx *bankFixture) ready() error {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if len(fx.ids) == 3 {
		return nil
	}
	if fx.err != nil {
		return fmt.Errorf("needs the clients of bank/create client: %v", fx.err)
	}
	return errors.New("needs the clients of bank/create client, which were not created")
}

func (fx *bankFixture) id(name string) int64 {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.ids[name]
}

func (fx *bankFixture) want(id int64) int64 {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.balance[id]
}

// moved records a transfer the service answered 200 to.
func (fx *bankFixture) moved(resp *response) {
	if resp.status != 200 {
		return
	}
	m, err := resp.object()
	if err != nil {
		return
	}
	from, ok1 := integer(m["from_client_id"])
	to, ok2 := integer(m["to_client_id"])
	amount, ok3 := integer(m["amount"])
	if !ok1 || !ok2 || !ok3 {
		return
	}
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.balance[from] -= amount
	fx.balance[to] += amount
}

// createClient is the setup check that creates one fixture client.
func (fx *bankFixture) createClient(name string, balance int64) check {
	return check{workload: "bank", name: fmt.Sprintf("bank/create client with %d -> 200 {id,balance}", balance), run: func(ctx context.Context, s *session) error {
		id, err := s.newClient(ctx, balance)
		fx.mu.Lock()
		defer fx.mu.Unlock()
		if err != nil {
			fx.err = err
			return err
		}
		for n, other := range fx.ids {
			if other == id {
				fx.err = fmt.Errorf("clients %s and %s got the same id %d", n, name, id)
				return fx.err
			}
		}
		fx.ids[name] = id
		fx.balance[id] = balance
		return nil
	}}
}

// newClient creates a client and returns its id.
func (s *session) newClient(ctx context.Context, balance int64) (int64, error) {
	resp := s.do(ctx, post(fmt.Sprintf("/client/new/%d", balance), ""))
	r := row{status: []int{200}, body: fields(map[string]any{"id": anyID, "balance": balance})}
	if err := r.expect(resp); err != nil {
		return 0, err
	}
	m, _ := resp.object()
	id, _ := integer(m["id"])
	return id, nil
}

func bankStages(t Target) []stage {
	fx := &bankFixture{ids: map[string]int64{}, balance: map[int64]int64{}}
	setup := fixed(
		fx.createClient("a", bankA),
		fx.createClient("b", bankB),
		fx.createClient("c", bankC),
	)
	table := func() []check { return rows("bank", bankRows(fx)) }
	after := fixed(
		check{workload: "bank", name: "bank/balances match the accepted transfers", run: fx.checkBalances},
		queriedCheck(t, "bank", "balances", func() (request, error) {
			if err := fx.ready(); err != nil {
				return request{}, err
			}
			return get(fmt.Sprintf("/client/%d/balance", fx.id("a"))), nil
		}, func(resp *response) error { return fields(map[string]any{"balance": fx.want(fx.id("a"))})(resp) }),
		keepAliveCheck("bank", "keep-alive: 400, 404, 409 then 200 on one connection", fx.ready, func() []step {
			a, b := fx.id("a"), fx.id("b")
			return []step{
				{post("/transaction", `{"from_client_id":`+strings.Repeat(" ", 2000)), 400},
				{get(fmt.Sprintf("/client/%d/balance", a)), 200},
				{post("/transaction", fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":1}`, a, maxID)), 404},
				{post("/transaction", fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":1000000000000}`, b, a)), 409},
				{get(fmt.Sprintf("/client/%d/balance", b)), 200},
			}
		}),
		healthyAfter("bank", func() (request, error) {
			if err := fx.ready(); err != nil {
				return request{}, err
			}
			return get(fmt.Sprintf("/client/%d/balance", fx.id("a"))), nil
		}),
		routeLabelCheck("bank", "/client/{id}/balance", func() (request, error) {
			if err := fx.ready(); err != nil {
				return request{}, err
			}
			return get(fmt.Sprintf("/client/%d/balance", fx.id("a"))), nil
		}),
		routeLabelCheck("bank", "/client/new/{balance}", func() (request, error) { return post("/client/new/1", ""), nil }),
		routeLabelCheck("bank", "/transaction", func() (request, error) { return post("/transaction", `{}`), nil }),
		check{workload: "bank", name: "bank/concurrent transfers keep every invariant", run: checkBankConcurrency},
		check{workload: "bank", name: "bank/transfers cut mid-flight leave no transaction open", run: checkCutTransfers},
	)
	return []stage{setup, table, after}
}

// checkBalances proves that the failed transfers of the table changed
// nothing and the accepted ones moved exactly their amount: each balance
// is its deposit plus what came in minus what went out.
func (fx *bankFixture) checkBalances(ctx context.Context, s *session) error {
	if err := fx.ready(); err != nil {
		return skipError(err.Error())
	}
	var sum int64
	for _, name := range []string{"a", "b", "c"} {
		id := fx.id(name)
		got, err := s.balance(ctx, id)
		if err != nil {
			return err
		}
		if want := fx.want(id); got != want {
			return fmt.Errorf("client %d has balance %d, want %d (its deposit plus the transfers answered 200 minus those it paid)", id, got, want)
		}
		sum += got
	}
	if sum != bankA+bankB+bankC {
		return fmt.Errorf("the clients hold %d in all, want %d (their deposits)", sum, bankA+bankB+bankC)
	}
	return nil
}

// balance reads a client's balance.
func (s *session) balance(ctx context.Context, id int64) (int64, error) {
	resp := s.do(ctx, get(fmt.Sprintf("/client/%d/balance", id)))
	if err := (row{status: []int{200}, body: fields(map[string]any{"balance": anyInt})}).expect(resp); err != nil {
		return 0, fmt.Errorf("GET /client/%d/balance: %v", id, err)
	}
	m, _ := resp.object()
	b, _ := integer(m["balance"])
	return b, nil
}

func bankRows(fx *bankFixture) []row {
	ok, bad := []int{200}, []int{400}
	a, b, c := fx.id("a"), fx.id("b"), fx.id("c")
	// tx renders a transfer body; from, to and amount are JSON text.
	tx := func(from, to, amount string) string {
		return fmt.Sprintf(`{"from_client_id":%s,"to_client_id":%s,"amount":%s}`, from, to, amount)
	}
	n := func(v int64) string { return fmt.Sprint(v) }
	A, B, C := n(a), n(b), n(c)
	unknown := n(maxID)
	transfer := func(body string) request { return post("/transaction", body) }
	moved := func(from, to, amount int64) func(*response) error {
		return fields(map[string]any{"id": anyID, "from_client_id": from, "to_client_id": to, "amount": amount})
	}
	balanceIs := func(id int64) func(*response) error {
		return func(resp *response) error {
			return fields(map[string]any{"balance": fx.want(id)})(resp)
		}
	}
	insufficient := func(resp *response) error {
		m, err := resp.object()
		if err != nil {
			return err
		}
		if m["error"] != "insufficient funds" {
			return fmt.Errorf(`409 body %s, want {"error":"insufficient funds"}`, trunc(string(resp.body), 200))
		}
		return nil
	}
	bal := func(id string) request { return get("/client/" + id + "/balance") }
	big := `{"from_client_id":` + A + `,"to_client_id":` + B + `,"amount":1,"pad":"` + strings.Repeat("x", 2<<20) + `"}`
	rs := []row{
		// Transfers that succeed (A starts with 1000, B with 0, C with 5).
		{name: "transfer -> 200 {id,from_client_id,to_client_id,amount}", req: transfer(tx(A, B, "100")), status: ok, body: moved(a, b, 100)},
		{name: "transfer amount 1.0 -> 200 (I-JSON)", req: transfer(tx(A, B, "1.0")), status: ok, body: moved(a, b, 1)},
		{name: "transfer amount 1e1 -> 200 (I-JSON)", req: transfer(tx(A, B, "1e1")), status: ok, body: moved(a, b, 10)},
		{name: "transfer ids written N.0 -> 200 (I-JSON)", req: transfer(tx(A+".0", B+".0", "2")), status: ok, body: moved(a, b, 2)},
		{name: "transfer ids in exponent form -> 200 (I-JSON)", req: transfer(tx(A+"e0", B+"E0", "1")), status: ok, body: moved(a, b, 1)},
		{name: "transfer with unknown fields -> 200", req: transfer(`{"note":"x","from_client_id":` + A + `,"to_client_id":` + B + `,"amount":3,"extra":[1,{"a":null}]}`), status: ok, body: moved(a, b, 3)},
		{name: "transfer duplicate amount key -> last wins or 400", req: transfer(`{"from_client_id":` + A + `,"to_client_id":` + B + `,"amount":900,"amount":4}`), status: []int{200, 400}, body: moved(a, b, 4)},
		{name: "transfer of the whole balance -> 200", req: transfer(tx(C, A, "5")), status: ok, body: moved(c, a, 5)},
		{name: "transfer from an emptied balance -> 409", req: transfer(tx(C, A, "1")), status: []int{409}},
		{name: "transfer insufficient funds -> 409", req: transfer(tx(B, A, "1000000000000")), status: []int{409}},
		{name: "transfer amount 1e12 over the balance -> 409", req: transfer(tx(A, B, "1e12")), status: []int{409}},
		// Unknown clients: 404 before any balance check.
		{name: "transfer to unknown client -> 404", req: transfer(tx(A, unknown, "1")), status: []int{404}},
		{name: "transfer from unknown client -> 404", req: transfer(tx(unknown, A, "1")), status: []int{404}},
		{name: "transfer between unknown clients -> 404", req: transfer(tx(unknown, n(maxID-1), "1")), status: []int{404}},
		{name: "transfer to unknown client over balance -> 404", req: transfer(tx(A, unknown, "1000000000000")), status: []int{404}},
		// Out of range or wrong type.
		{name: "transfer to self -> 400", req: transfer(tx(A, A, "1")), status: bad},
		{name: "transfer amount 0 -> 400", req: transfer(tx(A, B, "0")), status: bad},
		{name: "transfer amount -0 -> 400", req: transfer(tx(A, B, "-0")), status: bad},
		{name: "transfer amount -1 -> 400", req: transfer(tx(A, B, "-1")), status: bad},
		{name: "transfer amount 1.5 -> 400", req: transfer(tx(A, B, "1.5")), status: bad},
		{name: "transfer amount 1e-1 -> 400", req: transfer(tx(A, B, "1e-1")), status: bad},
		{name: "transfer amount over 10^12 -> 400", req: transfer(tx(A, B, "1000000000001")), status: bad},
		{name: "transfer amount 2^63 -> 400", req: transfer(tx(A, B, "9223372036854775808")), status: bad},
		{name: "transfer amount 2^64+1 -> 400", req: transfer(tx(A, B, "18446744073709551617")), status: bad},
		{name: "transfer amount 1e400 -> 400", req: transfer(tx(A, B, "1e400")), status: bad},
		{name: `transfer amount "10" -> 400`, req: transfer(tx(A, B, `"10"`)), status: bad},
		{name: "transfer amount true -> 400", req: transfer(tx(A, B, "true")), status: bad},
		{name: "transfer amount null -> 400", req: transfer(tx(A, B, "null")), status: bad},
		{name: "transfer amount missing -> 400", req: transfer(`{"from_client_id":` + A + `,"to_client_id":` + B + `}`), status: bad},
		{name: "transfer from_client_id missing -> 400", req: transfer(`{"to_client_id":` + B + `,"amount":1}`), status: bad},
		{name: "transfer to_client_id missing -> 400", req: transfer(`{"from_client_id":` + A + `,"amount":1}`), status: bad},
		{name: "transfer from_client_id 0 -> 400", req: transfer(tx("0", B, "1")), status: bad},
		{name: "transfer from_client_id -1 -> 400", req: transfer(tx("-1", B, "1")), status: bad},
		{name: "transfer from_client_id 2^53 -> 400", req: transfer(tx("9007199254740992", B, "1")), status: bad},
		{name: "transfer to_client_id 2^63 -> 400", req: transfer(tx(A, "9223372036854775808", "1")), status: bad},
		{name: "transfer to_client_id 1e300 -> 400", req: transfer(tx(A, "1e300", "1")), status: bad},
		{name: "transfer from_client_id 1.5 -> 400", req: transfer(tx("1.5", B, "1")), status: bad},
		{name: `transfer from_client_id "1" -> 400`, req: transfer(tx(`"`+A+`"`, B, "1")), status: bad},
		{name: "transfer to_client_id [id] -> 400", req: transfer(tx(A, "["+B+"]", "1")), status: bad},
		{name: "transfer to_client_id {} -> 400", req: transfer(tx(A, "{}", "1")), status: bad},
		{name: "transfer SQL injection in an id -> 400", req: transfer(tx(`"1; DROP TABLE client; --"`, B, "1")), status: bad},
		{name: "transfer SQL injection in amount -> 400", req: transfer(tx(A, B, `"1 OR 1=1"`)), status: bad},
		{name: "transfer U+0000 in an id -> 400", req: transfer(tx(`"\u0000"`, B, "1")), status: bad},
		{name: "transfer body array -> 400", req: transfer(`[` + A + `,` + B + `,1]`), status: bad},
		{name: "transfer body null -> 400", req: transfer(`null`), status: bad},
		{name: "transfer empty body -> 400", req: transfer(``), status: bad},
		{name: "transfer truncated body -> 400", req: transfer(`{"from_client_id":` + A + `,"to_client_id":` + B + `,"amo`), status: bad},
		{name: "transfer trailing garbage -> 400", req: transfer(tx(A, B, "1") + `;DROP TABLE client`), status: bad},
		{name: "transfer duplicate amount key, the last one invalid -> 400", req: transfer(`{"from_client_id":` + A + `,"to_client_id":` + B + `,"amount":1,"amount":"1"}`), status: bad},
		{name: "transfer duplicate from key, the last one 0 -> 400", req: transfer(`{"from_client_id":` + A + `,"to_client_id":` + B + `,"amount":1,"from_client_id":0}`), status: bad},
		{name: "transfer 2 MiB body -> 413", req: transfer(big), status: []int{413}},
		{name: "GET /transaction -> 405", req: get("/transaction"), status: []int{405}, allow: "POST"},
		// Reading balances: the fixture's expected value at the time of the row.
		{name: "balance -> 200 {balance}", req: bal(A), status: ok, body: balanceIs(a)},
		{name: "balance of a client created with 0 -> 200", req: bal(B), status: ok, body: balanceIs(b)},
		{name: "balance id zero-padded to 16 digits -> 200", req: bal(fmt.Sprintf("%016d", a)), status: ok, body: balanceIs(a)},
		{name: "balance id of 17 digits -> 400", req: bal(fmt.Sprintf("%017d", a)), status: bad},
		{name: "balance unknown id 2^53-1 -> 404", req: bal(unknown), status: []int{404}},
		{name: "balance id 2^53 -> 400", req: bal("9007199254740992"), status: bad},
		{name: "balance id 2^64 -> 400", req: bal("18446744073709551616"), status: bad},
		{name: "balance id 0 -> 400", req: bal("0"), status: bad},
		{name: "balance id 00 -> 400", req: bal("00"), status: bad},
		{name: "balance id -1 -> 400", req: bal("-1"), status: bad},
		{name: "balance id +1 -> 400", req: bal("%2B1"), status: bad},
		{name: "balance id with a space -> 400", req: bal("%20" + A), status: bad},
		{name: "balance id abc -> 400", req: bal("abc"), status: bad},
		{name: "balance id 1.5 -> 400", req: bal("1.5"), status: bad},
		{name: "balance id 1e3 -> 400", req: bal("1e3"), status: bad},
		{name: "balance id 0x10 -> 400", req: bal("0x10"), status: bad},
		{name: "balance id Infinity -> 400", req: bal("Infinity"), status: bad},
		{name: "balance id 16 nines (over 2^53-1) -> 400", req: bal("9999999999999999"), status: bad},
		{name: "balance id in Arabic-Indic digits -> 400", req: bal("%D9%A1%D9%A2"), status: bad},
		{name: "balance id in fullwidth digits -> 400", req: bal("%EF%BC%91"), status: bad},
		{name: "balance id %2e%2e -> 400", req: bal("%2e%2e"), status: bad},
		{name: "balance id with SQL -> 400", req: bal("1;DROP%20TABLE%20client"), status: bad},
		{name: "balance id with a quote -> 400", req: bal("1%27%20OR%20%271%27=%271"), status: bad},
		{name: "balance id ..%2f..%2fetc -> 400 or 404", req: bal("..%2f..%2fetc"), status: []int{400, 404}},
		{name: "balance empty id -> 400 or 404", req: bal(""), status: []int{400, 404}},
		{name: "/client/../balance -> 404", req: get("/client/../balance"), status: []int{404}},
		{name: "balance trailing slash -> 404", req: get("/client/" + A + "/balance/"), status: []int{404}},
		{name: "POST balance -> 405", req: post("/client/"+A+"/balance", `{}`), status: []int{405}, allow: "GET"},
		{name: "DELETE balance -> 405", req: request{method: "DELETE", path: "/client/" + A + "/balance"}, status: []int{405}, allow: "GET"},
		// Creating clients.
		{name: "create client with 10^12 -> 200", req: post("/client/new/1000000000000", ""), status: ok, body: fields(map[string]any{"id": anyID, "balance": 1000000000000})},
		{name: "create client zero-padded 16 digits -> 200", req: post("/client/new/0000000000000007", ""), status: ok, body: fields(map[string]any{"id": anyID, "balance": 7})},
		{name: "create client ignores its body -> 200", req: post("/client/new/3", `not json at all`), status: ok, body: fields(map[string]any{"id": anyID, "balance": 3})},
		{name: "create client over 10^12 -> 400", req: post("/client/new/1000000000001", ""), status: bad},
		{name: "create client 2^63 -> 400", req: post("/client/new/9223372036854775808", ""), status: bad},
		{name: "create client of 17 digits -> 400", req: post("/client/new/00000000000000001", ""), status: bad},
		{name: "create client -1 -> 400", req: post("/client/new/-1", ""), status: bad},
		{name: "create client 1.5 -> 400", req: post("/client/new/1.5", ""), status: bad},
		{name: "create client 1e3 -> 400", req: post("/client/new/1e3", ""), status: bad},
		{name: "create client Infinity -> 400", req: post("/client/new/Infinity", ""), status: bad},
		{name: "create client 0x10 -> 400", req: post("/client/new/0x10", ""), status: bad},
		{name: "create client abc -> 400", req: post("/client/new/abc", ""), status: bad},
		{name: "create client with SQL -> 400", req: post("/client/new/1;DROP%20TABLE%20client", ""), status: bad},
		{name: "create client empty balance -> 400 or 404", req: post("/client/new/", ""), status: []int{400, 404}},
		{name: "GET /client/new/5 -> 405", req: get("/client/new/5"), status: []int{405}, allow: "POST"},
	}
	for i := range rs {
		rs[i].needs = fx.ready
		if strings.HasPrefix(rs[i].name, "transfer") {
			rs[i].after = fx.moved
		}
		if rs[i].status[0] == 409 {
			rs[i].errBody = insufficient
		}
	}
	return rs
}
