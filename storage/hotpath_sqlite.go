package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun/schema"
)

// The hot path of a send on SQLite: the token lookup of every request and the statements of a
// write (the parent and the thread, the write count, the thread's insert, the message, the
// event, the inbox position and the thread's update). bun writes every value into the SQL
// text, so SQLite parsed and planned each of them anew — a fifth of the server's CPU under
// load. Here each is SQL with ? parameters, prepared once per connection (database/sql keeps
// a *sql.Stmt's preparation per connection, and Tx.StmtContext reuses it) and then only bound
// and run. The column lists and values come from bun's own table of each model, so a column
// added to a model is written here too; the values are bound as bun would have written them
// (times in bun's text format, which the stored times and every comparison with them use).
// A value bun would refuse (a string holding NUL) takes bun's path, and so its error.

// sqliteTime is how bun writes a time into SQLite's SQL (schema.BaseDialect.AppendTime).
const sqliteTime = "2006-01-02 15:04:05.999999-07:00"

// sqliteStatements are the prepared statements of one of a DB's pools on SQLite, by their
// text, and the texts being prepared in the background (see Forum.stmt). The writer's pool and
// the readers' pool have a set each: a statement prepared on one pool cannot run in a
// transaction of the other.
type sqliteStatements struct {
	pool      *sql.DB
	mu        sync.Mutex
	stmts     map[string]*sql.Stmt
	preparing map[string]bool
	closed    bool
	// background is the preparations under way in the background, which Close ends and waits
	// for: one that outlived it could open a connection — and the database's files — after
	// the caller took the database to be closed.
	background sync.WaitGroup
	stop       context.Context // cancelled by Close
	cancel     context.CancelFunc
}

// cached is the prepared statement of query, nil when it is not prepared yet.
func (s *sqliteStatements) cached(query string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stmts[query]
}

// keep stores st as the statement of query and returns the one to use: st, or the one another
// caller stored first (st is then closed). Nothing is kept once the database is closed.
func (s *sqliteStatements) keep(query string, st *sql.Stmt) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if have, ok := s.stmts[query]; ok {
		_ = st.Close()
		return have
	}
	if s.closed {
		return st
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st
}

// prepared is the statement of query prepared on the pool (for use outside a transaction).
// The lock is not held while it is prepared: preparing waits for a free connection, and every
// other caller would wait behind it.
func (s *sqliteStatements) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := s.cached(query); st != nil {
		return st, nil
	}
	st, err := s.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, translate(err)
	}
	return s.keep(query, st), nil
}

// prepareLater prepares query on the pool in the background, once, for the writes that come
// after: the write that asked for it has gone on with a statement of its own.
func (s *sqliteStatements) prepareLater(query string) {
	s.mu.Lock()
	if s.closed || s.preparing[query] || s.stmts[query] != nil {
		s.mu.Unlock()
		return
	}
	if s.preparing == nil {
		s.preparing = map[string]bool{}
	}
	s.preparing[query] = true
	if s.stop == nil {
		s.stop, s.cancel = context.WithCancel(context.Background())
	}
	stop := s.stop
	s.background.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.background.Done()
		ctx, cancel := context.WithTimeout(stop, time.Minute)
		defer cancel()
		st, err := s.pool.PrepareContext(ctx, query)
		s.mu.Lock()
		delete(s.preparing, query)
		s.mu.Unlock()
		if err == nil {
			if kept := s.keep(query, st); kept == st && s.isClosed() {
				_ = st.Close()
			}
		}
	}()
}

func (s *sqliteStatements) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// close ends and waits for the preparations in the background and closes the prepared
// statements (with the database).
func (s *sqliteStatements) close() {
	s.mu.Lock()
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
	s.background.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stmts {
		_ = st.Close()
	}
	s.stmts = nil
}

// sqliteHot reports whether the SQLite hot path applies: on SQLite, inside DB.Write.
func (f *Forum) sqliteHot() bool { return f.db.kind == SQLite && f.tx != nil }

// stmt is query prepared on the write's connection. A statement not yet prepared on the
// writer's pool is prepared on the write's own connection for this write (and on the pool in
// the background for the next): the pool's one connection is the one this write holds, so
// preparing there would wait for the write itself.
func (f *Forum) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := f.db.sqliteWrites.cached(query); st != nil {
		return f.tx.StmtContext(ctx, st), nil
	}
	st, err := f.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, translate(err)
	}
	f.db.sqliteWrites.prepareLater(query)
	return st, nil
}

func (f *Forum) execSQLite(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := f.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	return res, translate(err)
}

func (f *Forum) queryRowSQLite(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := f.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// selectSQLite reads the one row of query into dest, a model, in the write's transaction.
func (f *Forum) selectSQLite(ctx context.Context, query string, dest any, args ...any) error {
	st, err := f.stmt(ctx, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return translate(err)
	}
	return f.db.scanOne(ctx, rows, dest)
}

// sqliteModel is what the hot path needs of a model's table: its columns, and the
// statements that read one row by id, insert one and update the given columns.
type sqliteModel struct {
	table   *schema.Table
	columns []*schema.Field // every column but the primary key
	pk      *schema.Field
	all     string // SELECT every column FROM the table
	byID    string // … WHERE id = ?
	insert  string // INSERT … RETURNING id
}

var sqliteModels sync.Map // reflect.Type → *sqliteModel

func (db *DB) sqliteModelOf(model any) *sqliteModel {
	typ := reflect.TypeOf(model)
	if m, ok := sqliteModels.Load(typ); ok {
		return m.(*sqliteModel)
	}
	t := db.Table(typ)
	m := &sqliteModel{table: t}
	var all, names, marks []string
	for _, f := range t.Fields {
		all = append(all, `"`+f.Name+`"`)
		if f.IsPK {
			m.pk = f
			continue
		}
		m.columns = append(m.columns, f)
		names = append(names, `"`+f.Name+`"`)
		marks = append(marks, "?")
	}
	m.all = "SELECT " + strings.Join(all, ", ") + ` FROM "` + t.Name + `"`
	m.byID = m.all + ` WHERE "id" = ?`
	m.insert = `INSERT INTO "` + t.Name + `" (` + strings.Join(names, ", ") + ") VALUES (" +
		strings.Join(marks, ", ") + `) RETURNING "id"`
	sqliteModels.Store(typ, m)
	return m
}

// sqliteArg is a field's value as bun writes it into SQLite's SQL, and false when the hot
// path leaves it to bun (a type it does not bind, a string holding NUL).
func sqliteArg(v reflect.Value) (any, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, true
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case time.Time:
		return x.UTC().Format(sqliteTime), true
	case string:
		return x, strings.IndexByte(x, 0) < 0
	case bool:
		if x {
			return int64(1), true
		}
		return int64(0), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	}
	return nil, false
}

// args are the values of fields of model, and false when one of them is left to bun.
func sqliteArgs(model any, fields []*schema.Field) ([]any, bool) {
	strct := reflect.ValueOf(model).Elem()
	args := make([]any, 0, len(fields)+1)
	for _, f := range fields {
		a, ok := sqliteArg(f.Value(strct))
		if !ok {
			return nil, false
		}
		args = append(args, a)
	}
	return args, true
}

// insertSQLite inserts model (a *Message, *Event or *Thread) and sets its id; false when a
// value is left to bun (or the id is given) and nothing was done.
func (f *Forum) insertSQLite(ctx context.Context, model any, id *int64) (bool, error) {
	if *id != 0 {
		return false, nil
	}
	m := f.db.sqliteModelOf(model)
	args, ok := sqliteArgs(model, m.columns)
	if !ok {
		return false, nil
	}
	row, err := f.queryRowSQLite(ctx, m.insert, args...)
	if err != nil {
		return true, err
	}
	return true, translate(row.Scan(id))
}

// threadUpdateSQLite is the update of UpdateThread, with and without the inbox position.
var threadUpdateSQLite = func() [2]string {
	var sets []string
	for _, c := range threadColumns {
		sets = append(sets, `"`+c+`" = ?`)
	}
	plain := `UPDATE "threads" SET ` + strings.Join(sets, ", ") + ` WHERE "id" = ?`
	moved := `UPDATE "threads" SET ` + strings.Join(sets, ", ") + `, "inbox_tx" = ?, "inbox_seq" = ? WHERE "id" = ?`
	return [2]string{plain, moved}
}()

// updateThreadSQLite is UpdateThread on the hot path; false when a value is left to bun.
func (f *Forum) updateThreadSQLite(ctx context.Context, t *Thread, moveInbox bool) (bool, error) {
	m := f.db.sqliteModelOf(t)
	fields := make([]*schema.Field, 0, len(threadColumns))
	for _, c := range threadColumns {
		fields = append(fields, m.table.FieldMap[c])
	}
	args, ok := sqliteArgs(t, fields)
	if !ok {
		return false, nil
	}
	query := threadUpdateSQLite[0]
	if moveInbox {
		var seq int64
		row, err := f.queryRowSQLite(ctx, `UPDATE counters SET value = value + 1 WHERE name = 'inbox' RETURNING value`)
		if err != nil {
			return true, err
		}
		if err := row.Scan(&seq); err != nil {
			return true, translate(err)
		}
		t.InboxTx, t.InboxSeq = 0, seq
		args = append(args, t.InboxTx, t.InboxSeq)
		query = threadUpdateSQLite[1]
	}
	args = append(args, t.ID)
	res, err := f.execSQLite(ctx, query, args...)
	if err != nil {
		return true, err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return true, ErrNotFound
	}
	return true, nil
}

// countWriteSQLite is CountWrite's first two statements on the hot path, prepared: whether
// the write was recorded. When it was not, CountWrite's bun statements tell why.
func (f *Forum) countWriteSQLite(ctx context.Context, identity string, token int64, since, now time.Time, limit int) (bool, error) {
	s, n := since.UTC().Format(sqliteTime), now.UTC().Format(sqliteTime)
	if _, err := f.execSQLite(ctx, deleteOldWrites, identity, s); err != nil {
		return false, err
	}
	res, err := f.execSQLite(ctx, insertCountedWrite, identity, n, identity, limit, token, token)
	if err != nil {
		return false, err
	}
	added, err := res.RowsAffected()
	return added == 1, translate(err)
}

// sqliteTokenByHash is TokenByHash's read on SQLite, with the rooms a scoped token reaches
// (Token.Reached) in the same statement: its rooms, stored as "2,5", and the rooms inside
// them, as a JSON array; NULL for a token without rooms.
func (db *DB) sqliteTokenByHash(ctx context.Context, t *Token, hash string) error {
	st, err := db.sqliteReads.prepared(ctx, strings.TrimSuffix(db.sqliteModelOf(t).all, ` FROM "tokens"`)+`,
		CASE WHEN "rooms" = '' OR "human" THEN NULL ELSE (SELECT json_group_array(r.id) FROM
			(SELECT id FROM rooms AS r WHERE instr(',' || tokens.rooms || ',', ',' || r.id || ',') > 0
				OR instr(',' || tokens.rooms || ',', ',' || r.parent_id || ',') > 0 ORDER BY id) AS r)
		END AS "reached" FROM "tokens" WHERE "secret_hash" = ?`)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, hash)
	if err != nil {
		return translate(err)
	}
	var row tokenRow
	if err := db.scanOne(ctx, rows, &row); err != nil {
		return err
	}
	*t = row.Token
	if row.Reached != nil {
		t.Reached = []int64{}
		if err := json.Unmarshal([]byte(*row.Reached), &t.Reached); err != nil {
			return fmt.Errorf("the rooms token %d reaches: %w", t.ID, err)
		}
	}
	return nil
}

// tokenRow is a token with the rooms it reaches, as JSON.
type tokenRow struct {
	Token   `bun:",extend"`
	Reached *string `bun:"reached,scanonly"`
}
