"""Explore: the variables (semantic search and categories), a variable's places on a chart and a map, the tables
and columns the planner sees, and the ACS tables loaded (with a search over the ACS table catalog and a button that
loads one)."""

from typing import Any

import streamlit as st

from app_pages import components as ui
from sage import charts, explore
from sage.census.catalog_search import CATALOG_YEAR, search_tables
from sage.census.codes import ACS_VARIABLE
from sage.census.fetch_rules import fetch_command
from sage.describe import readable_label
from sage.errors import SageError
from sage.retrieve import retrieve
from sage.settings import Settings
from sage.status import loaded_tables

settings = ui.settings_or_stop()
st.title("Explore the data")
st.caption("What the census tables hold: every variable with estimates, where it has rows, and how it maps.")


# Cached for a while (the data changes only with `census fetch`); errors are raised, so they are never cached.
@st.cache_data(ttl=120, show_spinner=False)
def variable_list(_settings: Settings, key: int) -> dict[str, Any]:
    answer = explore.variable_list(_settings)
    if not answer.answered:
        raise answer.error
    return {"columns": answer.result.columns, "rows": answer.result.rows}


@st.cache_data(ttl=120, show_spinner=False)
def places(_settings, key: int, code: str, level: str) -> dict:
    answer = explore.places(_settings, code, level)
    if not answer.answered:
        raise answer.error
    return {"columns": answer.result.columns, "rows": answer.result.rows, "sql": answer.sql,
            "truncated": answer.result.truncated}


@st.cache_data(ttl=300, show_spinner=False)
def schema(_settings, key: int) -> list[dict]:
    from sage import db
    from sage.introspect import introspect

    described = db.run(_settings, db.OWNER, introspect)
    return [
        {
            "table": t.ref,
            "comment": t.comment or "",
            "rows": t.row_estimate,
            "columns": [
                {"column": c.name, "type": c.type,
                 "key": "primary" if c.primary_key else (f"→ {c.foreign_key}" if c.foreign_key else ""),
                 "nullable": c.nullable, "description": c.comment or ""}
                for c in t.columns
            ],
        }
        for t in described.tables
    ]


def variables() -> None:
    """The variable list, its search and filter, and the picked variable's top places and map."""
    try:
        data = variable_list(settings, hash(settings))
    except SageError as exc:
        ui.show_error(exc)
        return
    frame = charts.to_frame(data["columns"], data["rows"])
    frame["label"] = [readable_label(label, concept, universe) for label, concept, universe
                      in zip(frame["label"], frame["concept"], frame["universe"], strict=True)]
    search_col, category_col = st.columns([3, 1])
    query = search_col.text_input("Search variables by meaning", key="explore-search",
                                  placeholder="e.g. rent, people without insurance, degrees")
    categories = ["All"] + sorted(frame["category"].dropna().unique().tolist())
    category = category_col.selectbox("Category", categories, key="explore-category")
    shown = frame if category == "All" else frame[frame["category"] == category]
    if query.strip():
        try:
            chunks = retrieve(settings, query, top_k=15, object_types=["variable"])
        except SageError as exc:
            ui.show_error(exc)
            chunks = []
        order = []
        for chunk in chunks:
            found = ACS_VARIABLE.search(chunk.object_ref or "")
            if found and found.group(0) not in order:
                order.append(found.group(0))
        shown = shown[shown["variable_code"].isin(order)]
        present = set(shown["variable_code"])
        shown = shown.set_index("variable_code").loc[[c for c in order if c in present]].reset_index()
        st.caption(f"{len(shown)} variables, closest in meaning first.")
    # a rows column for every level that has rows at all
    level_columns = [f"{lv}_rows" for lv in explore.LEVELS if frame[f"{lv}_rows"].sum() > 0]
    st.dataframe(
        shown[["variable_code", "label", "concept", "universe", "vintage", "vintages", "category", *level_columns]],
        hide_index=True,
        height=min(400, 38 + 35 * max(1, len(shown))),
        column_config={
            "variable_code": st.column_config.TextColumn("Code"),
            "label": st.column_config.TextColumn("Label", width="large"),
            "concept": st.column_config.TextColumn("Concept"),
            "universe": st.column_config.TextColumn("Universe"),
            "vintage": st.column_config.TextColumn("Vintage"),
            "vintages": st.column_config.TextColumn("Periods"),
            "category": st.column_config.TextColumn("Category"),
            **{f"{lv}_rows": st.column_config.NumberColumn(f"{explore.LEVEL_NAMES[lv]} rows", format="localized")
               for lv in explore.LEVELS},
        },
    )
    if shown.empty:
        st.info("No variable matches; clear the search or pick another category.")
        return
    show_variable(shown, query)


def show_variable(shown, query: str) -> None:
    """One variable: its top 15 places, a map of all of them, and the SQL that read them."""
    codes = shown["variable_code"].tolist()
    by_code = shown.set_index("variable_code")
    pick_col, level_col = st.columns([3, 1])
    default = codes.index("B01003_001E") if "B01003_001E" in codes and not query.strip() else 0
    code = pick_col.selectbox("Show a variable on a chart and a map", codes, index=default, key="explore-variable",
                              format_func=lambda c: f"{c} · {by_code.loc[c, 'label']}")
    row = by_code.loc[code]
    levels = explore.levels_with_rows(row)
    if not levels:
        st.info("This variable has no estimates yet.")
        return
    level = level_col.radio("Places", levels, horizontal=True, key="explore-level",
                            format_func=explore.LEVEL_NAMES.get)
    try:
        found = places(settings, hash(settings), code, level)
    except SageError as exc:
        ui.show_error(exc)
        return
    # the chart titles come from column names: name the estimate after the variable, with its unit
    name = str(row["label"])
    columns = [name if c == "estimate" else c for c in found["columns"]]
    units = {name: charts.unit_for_variable(str(row["label"]), str(row["concept"]))}
    st.subheader(ui.md(row["label"]), anchor=False)
    periods = f" (periods loaded: {row['vintages']})" if row["vintages"] != row["vintage"] else ""
    st.caption(ui.md(f"{row['concept']} · universe: {row['universe']} · ACS 5-year {row['vintage']}{periods}"))
    top, where = st.columns([2, 3], gap="large")
    with top:
        st.markdown(f"**Top 15 {explore.LEVEL_PLURALS[level]}**")
        bar = charts.build(columns, found["rows"][:15], "bar", units=units)
        if bar.chart is not None:
            st.altair_chart(bar.chart, key="explore-bar")
    with where:
        mapped = charts.build(columns, found["rows"], "map", units=units)
        if mapped.chart is not None:
            st.altair_chart(mapped.chart, key="explore-map")
        for text in (mapped.fallback_reason, mapped.note):
            if text:
                st.caption(ui.md(text))
        if found["truncated"]:
            st.caption(f"The {len(found['rows']):,} largest {explore.LEVEL_PLURALS[level]} are shown.")
    with st.expander("SQL and data", icon=":material/code:"):
        st.code(found["sql"], language="sql")  # the guard's own layout of what ran
        st.dataframe(charts.to_frame(found["columns"], found["rows"]), hide_index=True, height=300)
    st.caption(ui.md(f"Source: {ui.SOURCE}, {row['vintage']}. Margins of error are 90% margins where published."))


def tables() -> None:
    """What introspection sees: the tables and columns the planner is told about."""
    try:
        described = schema(settings, hash(settings))
    except SageError as exc:
        ui.show_error(exc)
        described = []
    st.caption("The tables the planner and the read-only role can see, with the descriptions the planner reads.")
    for table in described:
        rows = f" · about {table['rows']:,} rows" if table["rows"] else ""
        with st.expander(ui.md(f"{table['table']}{rows}"), expanded=table["table"] == "public.estimates",
                         icon=":material/table_chart:"):
            if table["comment"]:
                st.caption(ui.md(table["comment"]))
            st.dataframe(table["columns"], hide_index=True,
                         column_config={"column": st.column_config.TextColumn("Column"),
                                        "type": st.column_config.TextColumn("Type"),
                                        "key": st.column_config.TextColumn("Key"),
                                        "nullable": st.column_config.CheckboxColumn("Nullable"),
                                        "description": st.column_config.TextColumn("Description", width="large")})


def loaded() -> None:
    """The ACS tables loaded, and a search over the ACS table catalog with the button that loads a table."""
    try:
        tables_in_db = loaded_tables(settings)
    except SageError as exc:
        ui.show_error(exc)
        tables_in_db = []
    ui.fetch_notice()
    if tables_in_db:
        st.dataframe(tables_in_db, hide_index=True, column_config={
            "table_id": st.column_config.TextColumn("Table"),
            "vintage": st.column_config.TextColumn("Vintage"),
            "variables": st.column_config.NumberColumn("Variables"),
            "source": st.column_config.TextColumn("Source"),
            "concept": st.column_config.TextColumn("Concept", width="large"),
            "category": st.column_config.TextColumn("Category"),
            "rows": st.column_config.NumberColumn("Estimates", format="localized"),
            "loaded_at": st.column_config.DatetimeColumn("Loaded at", format="localized"),
        })
    st.markdown("**Add an ACS table** (estimates and margins of error for every state and county, from the Census "
                "Data API)")
    query = st.text_input("Search the ACS table catalog", key="explore-catalog-search",
                          placeholder="e.g. tenure, commute, veterans, B25003")
    if not query.strip():
        st.caption("Every 2019-2023 ACS 5-year detailed table is in the offline catalog: search it by topic or id, "
                   "then load the table here. From a terminal (a free CENSUS\\_API\\_KEY is needed):")
        st.code(fetch_command(["B25003"], CATALOG_YEAR), language="bash")
        return
    try:
        found = search_tables(settings, query, limit=25)
    except SageError as exc:
        ui.show_error(exc)
        return
    if not found:
        st.info("No ACS table matches; try another word or a table id such as B25003.")
        return
    have = {t["table_id"] for t in tables_in_db}
    for t in found:
        t["loaded"] = t["table_id"] in have
    st.dataframe(found, hide_index=True, height=min(320, 38 + 35 * len(found)), column_config={
        "table_id": st.column_config.TextColumn("Table"),
        "concept": st.column_config.TextColumn("Title", width="large"),
        "universe": st.column_config.TextColumn("Universe"),
        "variables": st.column_config.NumberColumn("Lines"),
        "category": st.column_config.TextColumn("Category"),
        "loaded": st.column_config.CheckboxColumn("Loaded"),
    })
    by_id = {t["table_id"]: t for t in found}
    pick = st.selectbox("Table to load", list(by_id), key="explore-catalog-pick",
                        format_func=lambda t: f"{t} · {by_id[t]['concept']}")
    if by_id[pick]["loaded"]:
        st.caption(ui.md(f"{pick} is loaded; loading it again refreshes it from the Census Data API."))
    ui.fetch_action(settings, {"tables": [pick], "vintage": CATALOG_YEAR, "geographies": ["state", "county"]},
                    f"explore-load-{pick}")


variables_tab, tables_tab, loaded_tab = st.tabs(["Variables", "Tables and columns", "Loaded ACS tables"])
with variables_tab:
    variables()
with tables_tab:
    tables()
with loaded_tab:
    loaded()
