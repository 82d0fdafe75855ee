// duckdb-fingerprint.cjs: reads one Iceberg table's live rows with DuckDB and
// prints an order-independent fingerprint of their values, for tests that
// compare a table before and after icewright rewrote it with a reader that is
// not Go (internal/e2e/corpus_test.go).
//
// DuckDB's iceberg extension cannot be installed here: INSTALL downloads it
// from extensions.duckdb.org, and CI has no internet. So the Go test lists
// the scan with iceberg-go (data files, the delete files that apply to
// each, the table's schema) and this script does the reading itself with
// DuckDB's built-in Parquet reader, as a spec reader does:
//   - columns are matched by Parquet field id (read_parquet's schema map),
//     never by name; a column absent from a file takes the default the test
//     passes (an identity partition's value from the file's partition
//     tuple, a column's initial default, else NULL); so does a field the
//     file lacks inside a struct it has (the struct is rebuilt with the
//     default in place of the field, see structExpr);
//   - position delete files are anti-joined on (file_path, pos) by DuckDB;
//   - equality delete files are anti-joined on their equality columns
//     (NULL equals NULL), by DuckDB;
//   - deletion vectors are Puffin blobs that DuckDB cannot parse: the test
//     decodes them with iceberg-go's dv package and passes the positions.
// What iceberg-go decides is only which files a snapshot holds; every value
// is read by DuckDB.
//
// Input (stdin, JSON):
//   {"columns": [{"id": 1, "name": "a", "type": "INTEGER"}, ...],
//    (a struct column also has "fields": [{"id", "name", "type", "fields"?}, ...])
//    "name_mapping": {"1": ["a"]},  (top-level names, for files without field ids)
//    "files": [{"path": "/abs/data.parquet", "defaults": {"1": "42"},
//               "name": "file:/abs/data.parquet",  (the path as position deletes spell it, if not "path")
//               "position_deletes": ["/abs/del.parquet"], "deleted_positions": [3, 7],
//               "equality_deletes": [{"path": "/abs/eq.parquet", "ids": [1]}]}]}
// Output (stdout, JSON): {"rows": "N", "columns": {"a": "<sum of hashes>", ...}}
//
// The @duckdb/node-api package is resolved from ICEWRIGHT_DUCKDB_PREFIX (an npm
// prefix that scripts/tools.sh fills), not from the repository.
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const prefix = process.env.ICEWRIGHT_DUCKDB_PREFIX;
if (!prefix) {
  console.error('ICEWRIGHT_DUCKDB_PREFIX is not set (scripts/tools.sh duckdb installs @duckdb/node-api there)');
  process.exit(2);
}
const { DuckDBInstance } = createRequire(path.join(prefix, 'package.json'))('@duckdb/node-api');

const quote = (s) => "'" + String(s).replaceAll("'", "''") + "'";
const alias = (id) => 'c' + id;

// schemaMap maps Parquet field ids to columns. Defaults are not put in
// the map (its values must all have one type): a column the file lacks is
// selected as its literal instead, see fileQuery.
function schemaMap(columns) {
  const entries = columns.map((c) => `${c.id}: {name: ${quote(alias(c.id))}, type: ${quote(c.type)}, default_value: NULL}`);
  return 'MAP {' + entries.join(', ') + '}';
}

// structExpr is the value of struct column c (expression expr) when the
// file lacks some of its nested fields: the struct rebuilt with each
// missing field's default (f.defaults, keyed by field id) or NULL. It is
// undefined when the file has every nested field, or none has a default.
function structExpr(c, expr, present, defaults) {
  if (!c.fields) return undefined;
  let changed = false;
  const parts = c.fields.map((k) => {
    const name = JSON.stringify(k.name);
    const sub = `${expr}.${name}`;
    if (present.has(k.id)) {
      const inner = structExpr(k, sub, present, defaults);
      if (inner !== undefined) changed = true;
      return `${name} := ${inner !== undefined ? inner : sub}`;
    }
    const def = defaults && defaults[String(k.id)];
    if (def !== undefined) changed = true;
    return `${name} := CAST(${def !== undefined ? def : 'NULL'} AS ${k.type})`;
  });
  if (!changed) return undefined;
  return `CASE WHEN ${expr} IS NULL THEN NULL ELSE struct_pack(${parts.join(', ')}) END`;
}

async function fileQuery(con, job, f) {
  const cols = job.columns;
  const present = new Set();
  const names = new Set();
  const schema = await con.runAndReadAll(`SELECT name, field_id FROM parquet_schema(${quote(f.path)})`);
  for (const r of schema.getRowObjects()) {
    if (r.field_id !== null) present.add(Number(r.field_id));
    names.add(r.name);
  }
  if (present.size === 0) {
    // A file without field ids (an imported one): columns are found by
    // the table's name mapping (schema.name-mapping.default), as the spec
    // says; a column the mapping does not name is the default or NULL.
    const select = cols.map((c) => {
      const mapped = ((job.name_mapping || {})[String(c.id)] || []).find((n) => names.has(n));
      if (mapped !== undefined) return `CAST(${JSON.stringify(mapped)} AS ${c.type}) AS ${alias(c.id)}`;
      const def = f.defaults && f.defaults[String(c.id)];
      return `CAST(${def !== undefined ? def : 'NULL'} AS ${c.type}) AS ${alias(c.id)}`;
    });
    if (f.position_deletes?.length || f.deleted_positions?.length || f.equality_deletes?.length) {
      throw new Error(`${f.path}: deletes on a file without field ids are not handled by this reader`);
    }
    return `SELECT ${select.join(', ')} FROM read_parquet(${quote(f.path)})`;
  }
  const select = cols.map((c) => {
    const def = f.defaults && f.defaults[String(c.id)];
    if (!present.has(c.id) && def !== undefined) return `CAST(${def} AS ${c.type}) AS ${alias(c.id)}`;
    const rebuilt = present.has(c.id) ? structExpr(c, alias(c.id), present, f.defaults) : undefined;
    if (rebuilt !== undefined) return `CAST(${rebuilt} AS ${c.type}) AS ${alias(c.id)}`;
    return alias(c.id);
  });
  let q = `SELECT ${select.join(', ')} FROM read_parquet(${quote(f.path)}, schema = ${schemaMap(cols)}, file_row_number = true) AS d WHERE true`;
  if (f.position_deletes && f.position_deletes.length > 0) {
    const list = '[' + f.position_deletes.map(quote).join(', ') + ']';
    q += ` AND NOT EXISTS (SELECT 1 FROM read_parquet(${list}) AS p WHERE p.file_path = ${quote(f.name ?? f.path)} AND p.pos = d.file_row_number)`;
  }
  if (f.deleted_positions && f.deleted_positions.length > 0) {
    q += ` AND d.file_row_number NOT IN (${f.deleted_positions.join(', ')})`;
  }
  for (const eq of f.equality_deletes || []) {
    const eqCols = cols.filter((c) => eq.ids.includes(c.id));
    if (eqCols.length !== eq.ids.length) {
      throw new Error(`equality delete ${eq.path}: field ids ${eq.ids} not all in the schema`);
    }
    const on = eqCols.map((c) => `e.${alias(c.id)} IS NOT DISTINCT FROM d.${alias(c.id)}`).join(' AND ');
    q += ` AND NOT EXISTS (SELECT 1 FROM read_parquet(${quote(eq.path)}, schema = ${schemaMap(eqCols)}) AS e WHERE ${on})`;
  }
  return q;
}

async function main() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const out = { rows: '0', columns: {} };
  if (job.files.length > 0) {
    const parts = [];
    for (const f of job.files) parts.push('(' + (await fileQuery(con, job, f)) + ')');
    const union = parts.join(' UNION ALL ');
    // hash() is DuckDB's value hash; summing it as HUGEINT makes the
    // fingerprint independent of row order and keeps duplicates counted.
    const sums = job.columns.map((c) => `CAST(coalesce(sum(CAST(hash(${alias(c.id)}) AS HUGEINT)), 0) AS VARCHAR) AS ${alias(c.id)}`);
    const sql = `SELECT CAST(count(*) AS VARCHAR) AS n${sums.length ? ', ' + sums.join(', ') : ''} FROM (${union})`;
    const reader = await con.runAndReadAll(sql);
    const row = reader.getRowObjects()[0];
    out.rows = row.n;
    for (const c of job.columns) out.columns[c.name] = row[alias(c.id)];
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e && e.message ? e.message : String(e));
  process.exit(1);
});
