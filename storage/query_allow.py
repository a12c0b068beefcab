"""What `benchwatch query` may call: an allow-list, judged on DuckDB's own parse tree.

A statement passes only when every node of its `json_serialize_sql` tree is of a kind listed
here: query nodes, table references, expression classes, and — by name — the scalar, aggregate,
window and table functions below. Anything else (a function an extension adds, one that runs SQL
given as text such as `json_execute_serialized_sql` or `query()`, a file reader, the PostgreSQL
scanner, a system view that shows paths or settings, a node kind a later DuckDB invents) is
refused because it is *not listed*, not because someone thought of it. docs/deploy.md ("What
`benchwatch query` may call") is the reader's copy of this list.

Left out on purpose (each could be useful, none is needed to read the store): functions that
read or change session state (`current_setting`, `getvariable`, `nextval`, `currval`, `setseed`,
`write_log`), that take SQL or a function's name as text (`json_serialize_sql`,
`json_deserialize_sql`, `json_serialize_plan`, `list_aggregate`/`aggregate`), that sleep
(`sleep_ms`, `pg_sleep`), DuckDB-internal helpers (`__internal_*`, `finalize`, `combine`,
`stats`, `vector_type`), the PostgreSQL-compatibility macros (`pg_*`, `has_*_privilege`,
`current_user`, …), and every table function but those listed.
"""

from __future__ import annotations

# Statement kinds: SELECT (which DESCRIBE, SUMMARIZE and SHOW TABLES are too) and a plain
# EXPLAIN of one (storage.query.check_read_only).
QUERY_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})
TABLE_REFS = frozenset({"BASE_TABLE", "JOIN", "SUBQUERY", "TABLE_FUNCTION", "EXPRESSION_LIST", "EMPTY",
                        "SHOW_REF"})
EXPRESSION_CLASSES = frozenset({"CONSTANT", "COLUMN_REF", "FUNCTION", "WINDOW", "CASE", "CAST", "COMPARISON",
                                "CONJUNCTION", "OPERATOR", "SUBQUERY", "STAR", "LAMBDA", "LAMBDA_REF",
                                "COLLATE", "BETWEEN", "POSITIONAL_REFERENCE"})
# SHOW_REF kinds: DESCRIBE / SUMMARIZE of a query (checked like any query), SHOW TABLES.
SHOW_TYPES = frozenset({"DESCRIBE", "SUMMARY", "SHOW_UNQUALIFIED"})
SHOW_NAMES = frozenset({"tables", "__show_tables_expanded"})

_OPERATORS = """
    + - * / // % ** ^ & | << >> ~ ! !__postfix || ^@ @ @> <@ <-> <=> ->> ~~ !~~ ~~* !~~* ~~~
    like_escape not_like_escape ilike_escape not_ilike_escape
"""
_MATH = """
    abs acos acosh add asin asinh atan atan2 atanh bit_count cbrt ceil ceiling cos cosh cot degrees divide
    even exp factorial fdiv floor fmod gamma gcd greatest greatest_common_divisor isfinite isinf isnan lcm
    least least_common_multiple lgamma ln log log10 log2 mod multiply nextafter pi pow power radians random
    round round_even roundbankers sign signbit sin sinh sqrt subtract tan tanh trunc xor
"""
_TEXT = """
    ascii bar base64 bit_length chr concat concat_ws contains damerau_levenshtein editdist3 ends_with format
    formatReadableDecimalSize formatReadableSize format_bytes from_base64 hamming hash instr jaccard
    jaro_similarity jaro_winkler_similarity lcase left left_grapheme len length length_grapheme levenshtein
    lower lpad ltrim md5 md5_number md5_number_lower md5_number_upper mismatches nfc_normalize octet_length
    ord parse_dirname parse_dirpath parse_filename parse_formatted_bytes parse_path position prefix printf
    regexp_escape regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
    regexp_split_to_array regexp_split_to_table repeat replace reverse right right_grapheme rpad rtrim sha1
    sha256 split split_part starts_with str_split str_split_regex string_split string_split_regex
    string_to_array strip_accents strlen strpos substr substring substring_grapheme suffix to_base
    to_base64 translate trim ucase unicode upper url_decode url_encode char_length character_length
    bin hex unbin unhex from_binary from_hex to_binary to_hex encode decode
    bitstring get_bit set_bit bit_position
    gen_random_uuid uuid uuidv4 uuidv7 uuid_extract_timestamp uuid_extract_version
    error typeof nullif version
"""
_TIME = """
    age ago century current_date current_localtime current_localtimestamp date_add date_diff date_part
    date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth dayofweek dayofyear
    days_in_month decade epoch epoch_ms epoch_ns epoch_us era get_current_time get_current_timestamp hour
    isodow isoyear julian last_day make_date make_time make_timestamp make_timestamp_ms make_timestamp_ns
    make_timestamptz microsecond millennium millisecond minute month monthname nanosecond
    normalized_interval now quarter second strftime strptime time_bucket timezone timezone_hour
    timezone_minute to_centuries to_days to_decades to_hours to_microseconds to_millennia to_milliseconds
    to_minutes to_months to_quarters to_seconds to_timestamp to_weeks to_years today
    transaction_timestamp try_strptime week weekday weekofyear year yearweek
"""
_NESTED = """
    apply array_append array_apply array_cat array_concat array_contains array_cosine_distance
    array_cosine_similarity array_cross_product array_distance array_distinct array_dot_product
    array_extract array_filter array_grade_up array_has array_has_all array_has_any array_indexof
    array_inner_product array_intersect array_length array_negative_dot_product
    array_negative_inner_product array_pop_back array_pop_front array_position array_prepend
    array_push_back array_push_front array_reduce array_resize array_reverse array_reverse_sort
    array_select array_slice array_sort array_to_string array_to_string_comma_default array_transform
    array_unique array_value array_where array_zip cardinality element_at filter flatten generate_series
    generate_subscripts grade_up list_any_value list_append list_apply list_approx_count_distinct
    list_avg list_bit_and list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat
    list_contains list_cosine_distance list_cosine_similarity list_count list_distance list_distinct
    list_dot_product list_element list_entropy list_extract list_filter list_first list_grade_up list_has
    list_has_all list_has_any list_histogram list_indexof list_inner_product list_intersect list_kurtosis
    list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode
    list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend
    list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem list_skewness
    list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum list_transform
    list_unique list_value list_var_pop list_var_samp list_where list_zip range reduce unnest
    map map_concat map_contains map_contains_entry map_contains_value map_entries map_extract
    map_extract_value map_from_entries map_keys map_values row struct_concat struct_contains
    struct_extract struct_extract_at struct_has struct_indexof struct_insert struct_keys struct_pack
    struct_position struct_update struct_values union_extract union_tag union_value unpivot_list
    enum_code enum_first enum_last enum_range enum_range_boundary equi_width_bins is_histogram_other_bin
"""
_JSON = """
    array_to_json from_json from_json_strict json json_array json_array_length json_contains json_exists
    json_extract json_extract_path json_extract_path_text json_extract_string json_group_array
    json_group_object json_group_structure json_keys json_merge_patch json_object json_pretty json_quote
    json_structure json_transform json_transform_strict json_type json_valid json_value row_to_json to_json
"""
_AGGREGATES = """
    any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
    arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and bit_or
    bit_xor bitstring_agg bool_and bool_or corr count count_if count_star countif covar_pop covar_samp
    entropy favg first fsum geomean geometric_mean group_concat histogram histogram_exact kahan_sum
    kurtosis kurtosis_pop last list listagg mad max max_by mean median min min_by mode product quantile
    quantile_cont quantile_disc regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx
    regr_sxy regr_syy reservoir_quantile sem skewness stddev stddev_pop stddev_samp string_agg sum
    sum_no_overflow sumkahan var_pop var_samp variance wavg weighted_avg
"""
_WINDOW = """
    row_number rank dense_rank rank_dense percent_rank cume_dist ntile lag lead first_value last_value
    nth_value fill
"""
# Session facts that are no secret (the store's alias, its schema).
_SESSION = "current_catalog current_database current_schema current_schemas current_query"

SCALAR_FUNCTIONS = frozenset(" ".join([_OPERATORS, _MATH, _TEXT, _TIME, _NESTED, _JSON, _SESSION]).split())
AGGREGATE_FUNCTIONS = frozenset(_AGGREGATES.split())
WINDOW_FUNCTIONS = frozenset(_WINDOW.split()) | AGGREGATE_FUNCTIONS
FUNCTIONS = SCALAR_FUNCTIONS | AGGREGATE_FUNCTIONS | WINDOW_FUNCTIONS

# Table functions (FROM f(...)): generated rows, JSON unnesting, and the catalog's descriptions
# of tables, views and columns — never duckdb_databases (paths, a catalog's conninfo),
# duckdb_settings, duckdb_secrets, duckdb_extensions or any reader of files or servers.
TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "json_each", "json_tree",
                             "duckdb_columns", "duckdb_tables", "duckdb_views", "duckdb_constraints",
                             "duckdb_schemas", "duckdb_types", "duckdb_functions", "duckdb_keywords",
                             "pg_timezone_names", "icu_calendar_names"})
# On a DuckLake store, its read-only inspection functions (`ducklake_snapshots('lake')`, or the
# short form on the store's alias, `lake.snapshots()`); never its maintenance functions.
LAKE_TABLE_FUNCTIONS = frozenset({"ducklake_snapshots", "ducklake_table_info", "ducklake_table_changes",
                                  "ducklake_table_insertions", "ducklake_table_deletions",
                                  "ducklake_current_snapshot", "ducklake_last_committed_snapshot"})
LAKE_SHORT_FUNCTIONS = frozenset(name.removeprefix("ducklake_") for name in LAKE_TABLE_FUNCTIONS)

# DuckDB's own views (duckdb_views() WHERE internal) a query may read, as (schema, view): the
# descriptions of tables, views and columns. The others (duckdb_databases, pg_settings, …) not.
SYSTEM_VIEWS = frozenset({("main", "duckdb_columns"), ("main", "duckdb_tables"), ("main", "duckdb_views"),
                          ("main", "duckdb_constraints"), ("main", "duckdb_schemas"), ("main", "duckdb_types"),
                          ("information_schema", "columns"), ("information_schema", "tables"),
                          ("information_schema", "views"), ("information_schema", "schemata"),
                          ("information_schema", "table_constraints"),
                          ("information_schema", "key_column_usage")})
# The qualifiers under which DuckDB finds its built-in functions.
BUILTIN_CATALOGS = frozenset({"", "system"})
BUILTIN_SCHEMAS = frozenset({"", "main", "pg_catalog"})
# The other kinds of node a tree holds (result modifiers, orderings): structure, nothing to call.
STRUCTURAL_TYPES = frozenset({"ORDER_MODIFIER", "LIMIT_MODIFIER", "LIMIT_PERCENT_MODIFIER", "DISTINCT_MODIFIER",
                              "ORDER_DEFAULT", "ASCENDING", "DESCENDING"})
