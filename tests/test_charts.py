"""sage.charts: every display hint as Vega-Lite data (``chart.to_dict()``), and every fallback.  No pixels here."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from sage import charts
from sage.charts.bars import INSIDE_LABEL_SHARE
from sage.charts.maps import NO_DATA_COLOR

ROOT = Path(__file__).resolve().parent.parent

STATES = [
    ["0400000US06", "California", 39_242_785],
    ["0400000US48", "Texas", 29_640_343],
    ["0400000US12", "Florida", 21_634_529],
    ["0400000US36", "New York", 19_872_319],
    ["0400000US42", "Pennsylvania", 12_986_520],
]


def spec_of(spec: charts.ChartSpec) -> dict:
    d = spec.chart.to_dict()
    json.dumps(d)  # a chart is plain JSON: no Decimal, no NaN objects
    return d


def dataset(d: dict, name: str | None = None) -> list:
    """The rows of a named dataset (the top-level one by default)."""
    return d["datasets"][name or d["data"]["name"]]


def layer_of(d: dict, mark: str) -> dict:
    return next(layer for layer in d["layer"] if layer["mark"]["type"] == mark)


# --- bar ---------------------------------------------------------------------------------------------------------


def test_bar_is_sorted_labelled_and_has_tooltips():
    spec = charts.build(["geo_id", "state_name", "population"], STATES, "bar")
    assert (spec.kind, spec.fallback_reason) == ("bar", None)
    d = spec_of(spec)
    bar = layer_of(d, "bar")["encoding"]
    assert bar["y"]["field"] == "place" and bar["y"]["type"] == "nominal"
    assert bar["y"]["sort"] == ["California", "Texas", "Florida", "New York", "Pennsylvania"]
    assert bar["x"] == {**bar["x"], "field": "v0", "type": "quantitative", "title": "Population"}
    assert bar["x"]["axis"]["format"] == ",.0f"
    assert [(t["field"], t.get("title"), t.get("format")) for t in bar["tooltip"]] == [
        ("place", "State", None),
        ("v0", "Population", ",.0f"),
    ]
    text = layer_of(d, "text")["encoding"]
    assert text["text"] == {"field": "v0", "format": ",.0f", "type": "quantitative"}
    rows = dataset(d)
    assert rows[0] == {"place": "California", "v0": 39_242_785.0}
    # long bars carry their value inside, short ones right after the bar: labels fit in any width
    inside, outside = [layer for layer in d["layer"] if layer["mark"]["type"] == "text"]
    assert inside["mark"]["align"] == "right" and outside["mark"]["align"] == "left"
    assert inside["transform"][0]["filter"] == f"datum.v0 >= {INSIDE_LABEL_SHARE} * 39242785.0"
    assert outside["transform"][0]["filter"] == f"!({inside['transform'][0]['filter']})"


def test_bar_keeps_an_ascending_ranking_from_the_query():
    rows = [["Loving County", "TX", 64], ["Kalawao County", "HI", 83], ["King County", "TX", 190]]
    spec = charts.build(["county_name", "state_abbr", "population"], rows, "bar")
    bar = layer_of(spec_of(spec), "bar")["encoding"]
    assert bar["y"]["sort"] == ["Loving County, TX", "Kalawao County, HI", "King County, TX"]


def test_bar_with_unordered_rows_ranks_largest_first():
    rows = [["Ohio", 5], ["Iowa", 9], ["Utah", 1]]
    bar = layer_of(spec_of(charts.build(["state_name", "n"], rows, "bar")), "bar")["encoding"]
    assert bar["y"]["sort"] == ["Iowa", "Ohio", "Utah"]


def test_bar_draws_error_bars_from_margins_and_formats_dollars():
    rows = [
        ["Loudoun County", "Virginia", Decimal("178707"), Decimal("2390")],
        ["Falls Church city", "Virginia", Decimal("164536"), Decimal("12054")],
    ]
    spec = charts.build(["county_name", "state_name", "median_household_income", "margin_error"], rows, "bar")
    d = spec_of(spec)
    rule = layer_of(d, "rule")["encoding"]
    assert (rule["x"]["field"], rule["x2"]["field"]) == ("v0_low", "v0_high")
    bar = layer_of(d, "bar")["encoding"]
    assert bar["x"]["axis"]["format"] == "$,.0f"
    assert bar["tooltip"][-2:] == [
        {"field": "v0_moe", "format": "$,.0f", "title": "Margin of error (90%)", "type": "quantitative"},
        {"field": "v0_rel", "title": "Reliability (CV, Esri bands)", "type": "nominal"}]
    first = dataset(d)[0]
    assert first["place"] == "Loudoun County, Virginia"
    assert (first["v0_low"], first["v0_high"]) == (178707 - 2390, 178707 + 2390)
    # CV = (2390 / 1.645) / 178707 = 0.81%; Falls Church: (12054 / 1.645) / 164536 = 4.45%
    assert [r["v0_rel"] for r in dataset(d)] == ["high (CV 0.8%)", "high (CV 4.5%)"]


def test_percentages_are_plotted_as_fractions_with_a_percent_format():
    rows = [["Mississippi", 19.1], ["Louisiana", 18.7]]
    d = spec_of(charts.build(["state_name", "poverty_rate_pct"], rows, "bar"))
    bar = layer_of(d, "bar")["encoding"]
    assert bar["x"]["axis"]["format"] == ".1%" and bar["x"]["title"] == "Poverty rate"
    assert dataset(d)[0]["v0"] == pytest.approx(0.191)
    # a share already between 0 and 1 is not divided again
    d = spec_of(charts.build(["state_name", "insured_share"], [["Ohio", 0.93], ["Iowa", 0.95]], "bar"))
    assert sorted(r["v0"] for r in dataset(d)) == [0.93, 0.95]


def test_odd_column_names_never_reach_the_spec():
    rows = [["a.b", 1], ["c[d]", 2]]
    d = spec_of(charts.build(["name", "count(*)"], rows, "bar"))
    fields = {layer["encoding"]["x"]["field"] for layer in d["layer"]}
    assert fields == {"v0"}
    assert layer_of(d, "bar")["encoding"]["x"]["title"] == "Count(*)"


# --- big and statrow ---------------------------------------------------------------------------------------------


def test_big_is_one_formatted_number_with_its_margin_of_error():
    rows = [["Fairfax County", "Virginia", Decimal("150113"), Decimal("1652")]]
    spec = charts.build(["county_name", "state_name", "median_household_income", "margin_error"], rows, "big")
    assert spec.kind == "big" and spec.chart is None
    (metric,) = spec.metrics
    assert metric.value == "$150,113" and metric.moe == "± $1,652" and metric.raw == 150113.0
    assert metric.label == "Median household income · Fairfax County, Virginia"
    # CV = (1652 / 1.645) / 150113 = 0.67%: high by Esri's bands, which the label names
    assert metric.reliability == "high reliability (CV 0.7%, Esri convention)"


@pytest.mark.parametrize("value, moe, band", [(1000, 197, "high"), (1000, 198, "medium"), (1000, 658, "medium"),
                                              (1000, 659, "low"), (0, 10, None), (1000, None, None)])
def test_reliability_bands_follow_esri(value, moe, band):
    # CV = MOE / 1.645 / value: 197 -> 11.98% (high, <= 12%), 198 -> 12.04% (medium), 658 -> 40.0% (medium),
    # 659 -> 40.06% (low)
    text = charts.reliability_text(value, moe)
    assert (text.split(" ")[0] if text else None) == band
    spec = charts.build(["county_name", "state_name", "median_age", "median_age_moe"],
                        [["A County", "Ohio", value, moe]], "big")
    assert (spec.metrics[0].reliability.split(" ")[0] if spec.metrics[0].reliability else None) == band


def test_the_table_gets_a_reliability_column_after_each_estimate_with_a_margin():
    columns = ["county_name", "state_name", "median_household_income", "median_household_income_moe", "population",
               "change", "change_moe"]
    rows = [["Loving County", "Texas", Decimal("80938"), Decimal("36000"), 64, 10, 30],
            ["Travis County", "Texas", Decimal("97169"), Decimal("1289"), 1_300_000, 20, 5],
            ["King County", "Texas", Decimal("70000"), None, 250, 1, None]]
    frame = charts.table_frame(columns, rows)
    assert list(frame.columns) == ["county_name", "state_name", "median_household_income",
                                   "median_household_income_moe", "median_household_income reliability",
                                   "population", "change", "change_moe"]  # a change gets none: it is tested
    # Loving: (36000 / 1.645) / 80938 = 27.0% -> medium; Travis 0.8% -> high; King has no margin
    texts = [None if pd.isna(t) else t for t in frame["median_household_income reliability"]]
    assert texts == ["medium (CV 27.0%)", "high (CV 0.8%)", None]
    assert charts.table_frame(["state_name", "population"], [["Ohio", 1]]).columns.tolist() == ["state_name",
                                                                                               "population"]


def test_big_without_margin_and_a_count():
    spec = charts.build(["state_name", "population"], [["Tennessee", 6_986_082]], "big")
    assert [(m.value, m.moe) for m in spec.metrics] == [("6,986,082", None)]


def test_statrow_shows_each_measure_of_one_row():
    rows = [["Ohio", 11_800_000, 38.5, 12.9]]
    spec = charts.build(["state_name", "population", "median_age", "poverty_rate_pct"], rows, "statrow")
    assert spec.kind == "statrow"
    assert [(m.label, m.value) for m in spec.metrics] == [
        ("Population", "11,800,000"), ("Median age", "38.5"), ("Poverty rate", "12.9%")
    ]
    assert spec.note == "Ohio"


def test_statrow_of_a_few_places_of_one_measure():
    rows = [["Texas", 29_640_343], ["Florida", 21_634_529]]
    spec = charts.build(["state_name", "population"], rows, "statrow")
    assert spec.kind == "statrow" and spec.fallback_reason is None
    assert [(m.label, m.value) for m in spec.metrics] == [("Texas", "29,640,343"), ("Florida", "21,634,529")]


# --- grouped -----------------------------------------------------------------------------------------------------


def test_grouped_bars_side_by_side_for_measures_of_one_unit():
    rows = [["Texas", 15_000_000, 14_600_000], ["Ohio", 5_900_000, 5_900_000]]
    spec = charts.build(["state_name", "men", "women"], rows, "grouped")
    assert spec.kind == "grouped"
    d = spec_of(spec)
    enc = layer_of(d, "bar")["encoding"]
    assert enc["yOffset"]["field"] == "series" and enc["color"]["field"] == "series"
    assert enc["x"]["field"] == "value" and enc["x"]["axis"]["format"] == ",.0f"
    assert enc["y"]["sort"] == ["Texas", "Ohio"]
    assert {t["field"] for t in enc["tooltip"]} == {"place", "series", "value"}
    assert [layer["mark"]["type"] for layer in d["layer"]] == ["bar"]  # no margins, no whiskers


def test_grouped_bars_get_error_bars_from_their_margins():
    rows = [["Texas", 15.1, 0.2, 14.0, 0.3], ["Ohio", 13.0, 0.25, 12.9, 0.2]]
    d = spec_of(charts.build(["state_name", "poverty_pct", "poverty_pct_moe", "child_poverty_pct",
                              "child_poverty_pct_moe"], rows, "grouped"))
    rule = layer_of(d, "rule")["encoding"]
    assert (rule["x"]["field"], rule["x2"]["field"]) == ("low", "high")
    assert rule["yOffset"]["field"] == "series"  # one whisker per bar of the group
    texas = next(r for r in dataset(d) if r["place"] == "Texas" and r["series"] == "Poverty")
    assert (texas["low"], texas["high"]) == (pytest.approx(0.149), pytest.approx(0.153))
    assert "moe" in [t["field"] for t in layer_of(d, "bar")["encoding"]["tooltip"]]


def test_grouped_long_form_uses_the_second_text_column_as_series():
    rows = [["Ohio", "native", 90.0], ["Ohio", "noncitizen", 70.0], ["Iowa", "native", 95.0],
            ["Iowa", "noncitizen", 75.0]]
    spec = charts.build(["state_name", "group", "insured_pct"], rows, "grouped")
    d = spec_of(spec)
    assert spec.kind == "grouped" and layer_of(d, "bar")["encoding"]["color"]["field"] == "series"
    assert {r["series"] for r in dataset(d)} == {"native", "noncitizen"}


def test_grouped_measures_of_different_units_get_one_panel_each():
    rows = [["Texas", 29_640_343, 76_292], ["Ohio", 11_785_935, 69_680]]
    spec = charts.build(["state_name", "population", "median_household_income"], rows, "grouped")
    d = spec_of(spec)
    assert spec.kind == "grouped" and len(d["hconcat"]) == 2 and spec.wide
    assert d["resolve"]["scale"]["x"] == "independent"
    formats = [layer_of(panel, "bar")["encoding"]["x"]["axis"]["format"] for panel in d["hconcat"]]
    assert formats == [",.0f", "$,.0f"]


# --- map ---------------------------------------------------------------------------------------------------------


def test_state_map_joins_the_topojson_on_fips_from_geo_id():
    spec = charts.build(["geo_id", "state_name", "population"], STATES, "map")
    assert spec.kind == "map" and spec.note is None
    d = spec_of(spec)
    assert d["mark"]["type"] == "geoshape"
    assert d["data"]["format"] == {"type": "topojson", "feature": "states"}
    topology = dataset(d)
    assert topology["type"] == "Topology" and "states" in topology["objects"]
    (lookup,) = d["transform"]
    assert lookup["lookup"] == "id" and lookup["from"]["key"] == "fips"
    assert set(lookup["from"]["fields"]) == {"place", "v0"}
    joined = dataset(d, lookup["from"]["data"]["name"])
    assert {r["fips"]: r["place"] for r in joined}["06"] == "California"
    assert d["projection"] == {"type": "identity"}
    color = d["encoding"]["color"]
    assert color["condition"]["field"] == "v0" and color["value"] == NO_DATA_COLOR
    assert color["condition"]["legend"]["format"] == ",.0f"
    assert [t["field"] for t in d["encoding"]["tooltip"]] == ["place", "v0"]


def test_county_map_from_a_five_digit_fips_column_with_margins():
    rows = [["51059", "Fairfax County", "VA", 150113, 1652], ["51107", "Loudoun County", "VA", 178707, 2390],
            ["72127", "San Juan Municipio", "PR", 30000, 900]]
    spec = charts.build(["fips", "county_name", "state_abbr", "median_household_income", "margin_error"], rows, "map")
    d = spec_of(spec)
    assert d["data"]["format"]["feature"] == "counties"
    assert {"v0_moe", "v0_rel"} <= set(d["transform"][0]["from"]["fields"])
    assert [t["field"] for t in d["encoding"]["tooltip"]] == ["place", "v0", "v0_moe", "v0_rel"]
    assert "not on this map" in spec.note  # Puerto Rico is not drawn by the shipped Albers file


def test_map_from_state_names_alone():
    rows = [["Ohio", 1.0], ["Iowa", 2.0], ["Utah", 3.0]]
    spec = charts.build(["state_name", "score"], rows, "map")
    d = spec_of(spec)
    assert spec.kind == "map"
    assert sorted(r["fips"] for r in dataset(d, d["transform"][0]["from"]["data"]["name"])) == ["19", "39", "49"]


def test_skewed_counts_get_colour_classes_whose_legend_labels_cannot_overlap():
    # Texas-like county populations: a few huge counties, a median of about 19,000.  A quantile scale drew its
    # legend as a gradient with the breaks at their values' positions, all at the left end, labels on top of each
    # other; classes of equal counts in a symbol legend give every label a column of its own.
    values = [4_758_579, 2_603_816, 2_135_743, 2_009_324, 1_116_601] + [900 + 350 * i for i in range(120)]
    rows = [[f"0500000US48{2 * i + 1:03d}", f"County {i}", "Texas", v] for i, v in enumerate(values)]
    d = spec_of(charts.build(["geo_id", "county_name", "state_name", "population"], rows, "map"))
    color = d["encoding"]["color"]["condition"]
    labels = color["scale"]["domain"]
    assert color["type"] == "ordinal" and color["field"] == "cls" and color["sort"] == labels
    assert len(labels) == len(set(labels)) == len(color["scale"]["range"]) == 5
    assert labels[0].startswith("< ") and labels[-1].startswith("≥ ") and all(" – " in t for t in labels[1:-1])
    assert all(len(t) <= 14 for t in labels)  # short enough for its column
    legend = color["legend"]
    assert legend["type"] == "symbol" and legend["columns"] == len(labels) and legend["direction"] == "horizontal"
    assert "gradientLength" not in legend
    assert NO_DATA_COLOR not in color["scale"]["range"]
    # every row is in the class its value falls in, and the tooltip keeps the value itself
    lookup = d["transform"][0]
    joined = dataset(d, lookup["from"]["data"]["name"])
    assert "cls" in lookup["from"]["fields"]
    big = next(r for r in joined if r["v0"] == 4_758_579)
    small = min(joined, key=lambda r: r["v0"])
    assert (big["cls"], small["cls"]) == (labels[-1], labels[0])
    assert [t["field"] for t in d["encoding"]["tooltip"]] == ["place", "v0"]


def test_class_labels_by_unit():
    from sage.charts.maps import _classes

    values = pd.Series([10_000.0 * i for i in range(1, 40)] + [5_000_000.0])
    _breaks, labels = _classes(values, "dollars")
    assert labels[0].startswith("< $") and labels[-1].startswith("≥ $")
    _breaks, labels = _classes(pd.Series([0.01 * i for i in range(1, 30)] + [0.9]), "percent")
    assert labels[0].endswith("%") and labels[-1].endswith("%")


def test_evenly_spread_values_keep_a_continuous_scale():
    rows = [[f"0400000US{f:02d}", f"S{f}", 40 + f] for f in range(1, 13)]
    color = spec_of(charts.build(["geo_id", "state_name", "people"], rows, "map"))["encoding"]["color"]["condition"]
    assert color["type"] == "quantitative" and color["legend"]["labelOverlap"] == "greedy"


# --- a change between two periods, the difference of two places (issue 14) -----------------------------------------

CHANGE_COLUMNS = ["county_name", "state_name", "median_household_income_2014_2018",
                  "median_household_income_2019_2023", "change", "change_moe", "pct_change", "pct_change_moe"]
# the offline planner's rows for Travis, Williamson, Bastrop and Hays counties, TX (2014-2018 in 2023 dollars)
CHANGES = [["Travis County", "Texas", 87361, 97169, 9808.09, 1632.54, 11.2, 2.0],
           ["Williamson County", "Texas", 101861, 108309, 6447.78, 2442.93, 6.3, 2.4],
           ["Bastrop County", "Texas", 76698, 82811, 6113.0, 6500.0, 8.0, 8.9],
           ["Hays County", "Texas", 80170, 85735, 5565.0, 3400.0, 6.9, 4.4]]


def test_a_change_of_one_place_shows_both_periods_the_change_and_the_percent_change_with_margins():
    spec = charts.build(CHANGE_COLUMNS, CHANGES[:1], "statrow")
    assert spec.kind == "statrow" and spec.chart is None and spec.fallback_reason is None
    assert [(m.label, m.value, m.moe) for m in spec.metrics] == [
        ("2014-2018", "$87,361", None), ("2019-2023", "$97,169", None),
        ("Change", "+$9,808", "± $1,633"), ("Percent change", "+11.2%", "± 2.0%")]
    assert spec.note == "Median household income, 2014-2018 → 2019-2023 · Travis County, Texas"
    # a loss keeps its sign
    lost = [["Loving County", "Texas", 100, 64, -36, None, -36.0, None]]
    spec = charts.build(["county_name", "state_name", "population_2014_2018", "population_2019_2023", "change",
                         "change_moe", "pct_change", "pct_change_moe"], lost, "big")
    assert [(m.value, m.moe) for m in spec.metrics[2:]] == [("-36", None), ("-36.0%", None)]


def test_a_ranked_change_draws_both_periods_beside_the_change_with_its_error_bars():
    spec = charts.build(CHANGE_COLUMNS, CHANGES, "bar")
    assert spec.kind == "bar" and spec.fallback_reason is None and spec.wide  # two panels: the card's full width
    assert spec.note == "Median household income, 2014-2018 → 2019-2023"
    d = spec_of(spec)
    dumbbell, bars = d["hconcat"]
    order = ["Travis County, Texas", "Williamson County, Texas", "Bastrop County, Texas", "Hays County, Texas"]
    # both periods of each place: a line from the earlier to the later value and a dot at each
    line, dots = layer_of(dumbbell, "rule")["encoding"], layer_of(dumbbell, "circle")["encoding"]
    assert line["y"]["sort"] == dots["y"]["sort"] == order
    assert dots["color"]["scale"]["domain"] == ["2014-2018", "2019-2023"]
    assert dots["x"]["axis"]["format"] == "$,.0f" and dots["x"]["scale"]["zero"] is False
    periods = d["datasets"][dumbbell["layer"][1]["data"]["name"]]
    assert {(r["place"], r["period"]): r["value"] for r in periods}[("Travis County, Texas", "2014-2018")] == 87361
    # the change, ranked as the query ranked it, with whiskers at change ± MOE
    bar, rule = layer_of(bars, "bar")["encoding"], layer_of(bars, "rule")["encoding"]
    assert bar["y"]["sort"] == order and bar["y"]["axis"] is None  # the dumbbell names the places
    assert bar["x"]["title"] == "Change, 2014-2018 → 2019-2023" and bar["x"]["axis"]["format"] == "$,.0f"
    assert (rule["x"]["field"], rule["x2"]["field"]) == ("v0_low", "v0_high")
    rows = {r["place"]: r for r in d["datasets"][bars["data"]["name"]]}
    assert (rows["Bastrop County, Texas"]["v0_low"], rows["Bastrop County, Texas"]["v0_high"]) == (-387.0, 12613.0)
    assert bar["x"]["scale"]["domain"][0] < -387  # the whisker that reaches below zero stays on the chart


def test_a_ranking_by_percent_change_bars_the_percent_change():
    rows = sorted(CHANGES, key=lambda r: r[6], reverse=True)
    d = spec_of(charts.build(CHANGE_COLUMNS, rows, "bar"))
    bar = layer_of(d["hconcat"][1], "bar")["encoding"]
    assert bar["x"]["title"] == "Percent change, 2014-2018 → 2019-2023" and bar["x"]["axis"]["format"] == ".1%"
    assert bar["y"]["sort"][0] == "Travis County, Texas"


def test_a_change_without_margins_has_no_whiskers():
    rows = [["Collin County", "Texas", 944350, 1116601, 172251, None, 18.2, None],
            ["Harris County", "Texas", 4602523, 4758579, 156056, None, 3.4, None]]
    d = spec_of(charts.build(["county_name", "state_name", "population_2014_2018", "population_2019_2023",
                              "change", "change_moe", "pct_change", "pct_change_moe"], rows, "bar"))
    bars = d["hconcat"][1]
    assert [layer["mark"]["type"] for layer in bars["layer"]] == ["bar", "text", "text"]


def test_a_change_asked_as_a_map_maps_the_change():
    rows = [[f"0500000US48{2 * i + 1:03d}", f"County {i}", "Texas", 100 + i, 110 + 3 * i, 10 + 2 * i, None,
             10.0, None] for i in range(12)]
    spec = charts.build(["geo_id", "county_name", "state_name", "population_2014_2018", "population_2019_2023",
                         "change", "change_moe", "pct_change", "pct_change_moe"], rows, "map")
    assert spec.kind == "map" and spec.note.startswith("Mapped the change, 2014-2018 → 2019-2023")
    d = spec_of(spec)
    assert d["encoding"]["color"]["condition"]["title"] == "Change"
    # losses and gains: a diverging scale centred on zero
    rows[0][5] = -40
    color = spec_of(charts.build(["geo_id", "county_name", "state_name", "population_2014_2018",
                                  "population_2019_2023", "change", "change_moe", "pct_change", "pct_change_moe"],
                                 rows, "map"))["encoding"]["color"]["condition"]
    assert color["scale"] == {"scheme": "redblue", "domainMid": 0}


def test_the_difference_of_two_places_shows_both_values_and_the_difference_with_margins():
    columns = ["first_place", "second_place", "first_median_household_income", "second_median_household_income",
               "difference", "first_median_household_income_moe", "second_median_household_income_moe",
               "difference_moe"]
    rows = [["Williamson County, Texas", "Travis County, Texas", 108309, 97169, 11140, 2023, 1289, 2398.76]]
    spec = charts.build(columns, rows, "statrow")
    assert spec.kind == "statrow" and spec.note == "Median household income"
    assert [(m.label, m.value, m.moe) for m in spec.metrics] == [
        ("Williamson County, Texas", "$108,309", "± $2,023"), ("Travis County, Texas", "$97,169", "± $1,289"),
        ("Difference", "+$11,140", "± $2,399")]


# --- places on a point map, levels without a map (issue 17) --------------------------------------------------------

TX_CITIES = [["Houston city, Texas", 2_300_419], ["San Antonio city, Texas", 1_458_954],
             ["Dallas city, Texas", 1_299_553], ["Austin city, Texas", 967_862]]


def points_layer(d: dict) -> dict:
    return layer_of(d, "circle")


def test_places_by_name_get_a_point_map_at_their_internal_points_over_their_state():
    spec = charts.build(["name", "population"], TX_CITIES, "map")
    assert (spec.kind, spec.fallback_reason, spec.note) == ("map", None, None)
    d = spec_of(spec)
    assert d["projection"] == {"type": "albersUsa"}
    outline = layer_of(d, "geoshape")
    assert "data" not in outline  # the states come from the top-level topology
    assert d["data"]["format"] == {"type": "topojson", "feature": "states"}
    assert [g["id"] for g in dataset(d)["objects"]["states"]["geometries"]] == ["48"]  # zoomed to Texas
    dots = points_layer(d)
    enc = dots["encoding"]
    assert (enc["longitude"]["field"], enc["latitude"]["field"]) == ("lon", "lat")
    rows = {r["place"]: r for r in d["datasets"][dots["data"]["name"]]}
    # the Census internal point from data/geo/places_internal_points.csv (PLACES-SOURCE.md's spot check)
    assert (rows["Austin city, Texas"]["lat"], rows["Austin city, Texas"]["lon"]) == (30.298622, -97.754134)
    # a count sizes the dots (area, from zero); round legend values no larger than the largest place
    assert enc["size"]["field"] == "v0" and enc["size"]["scale"]["zero"] is True
    assert enc["size"]["legend"]["values"] == [200_000, 1_000_000, 2_000_000]
    assert enc["size"]["legend"]["labelExpr"] == "format(datum.value, '~s')"  # 200k, 1M, 2M (not 0.2M)
    assert [t["field"] for t in enc["tooltip"]] == ["place", "v0"]


def test_a_place_rate_colours_the_dots_and_places_in_several_states_show_the_country():
    rows = [["Austin city, Texas", 12.1], ["Seattle city, Washington", 9.8], ["Chicago city, Illinois", 16.9],
            ["Los Angeles city, California", 16.5]]
    d = spec_of(charts.build(["name", "poverty_rate_pct"], rows, "map"))
    enc = points_layer(d)["encoding"]
    assert enc["color"]["field"] == "v0" and enc["color"]["legend"]["format"] == ".1%"
    assert enc["size"] == {"value": 70}
    assert len(dataset(d)["objects"]["states"]["geometries"]) >= 50


def test_place_rows_with_a_state_column_are_places_not_states():
    # the Explore page's place rows: geo_id, name, state_abbr, estimate, margin_error
    rows = [["1600000US4835000", "Houston city, Texas", "TX", 2_300_419, 4_000],
            ["1600000US4805000", "Austin city, Texas", "TX", 967_862, 3_000],
            ["1600000US7276770", "San Juan zona urbana, Puerto Rico", "PR", 300_000, 2_000]]
    spec = charts.build(["geo_id", "name", "state_abbr", "population", "margin_error"], rows, "map")
    d = spec_of(spec)
    assert spec.kind == "map" and d["projection"]["type"] == "albersUsa"
    assert "1 place(s) are not on this map" in spec.note  # Puerto Rico is outside the Albers USA projection
    dots = points_layer(d)
    assert "v0_moe" in [t["field"] for t in dots["encoding"]["tooltip"]]


def test_a_ranking_of_places_offers_their_point_map_beside_the_bars():
    spec = charts.build(["name", "population"], TX_CITIES, "bar")
    assert spec.kind == "bar" and spec.alternate is not None and spec.alternate.kind == "map"
    assert layer_of(spec_of(spec.alternate), "circle")
    # states and counties have no alternate (their map is a hint of its own)
    assert charts.build(["geo_id", "state_name", "population"], STATES, "bar").alternate is None


def test_too_many_places_for_bars_become_a_point_map():
    rows = [[r[0], r[1]] for r in TX_CITIES] * 20  # 80 rows
    rows = [[f"{name}", v + i] for i, (name, v) in enumerate(rows)]
    spec = charts.build(["name", "population"], rows, "bar")
    assert spec.kind == "map" and "too many for a bar chart" in spec.fallback_reason


@pytest.mark.parametrize(
    "columns, rows, words",
    [
        (["geo_id", "name", "median_household_income"],
         [["1400000US48453001100", "Census Tract 11; Travis County; Texas", 90_000],
          ["1400000US48453001200", "Census Tract 12; Travis County; Texas", 80_000]], "census tracts"),
        (["name", "population"], [["ZCTA5 78701", 12_000], ["ZCTA5 78702", 23_000]],
         "ZIP code tabulation areas (ZCTAs)"),
        (["name", "population"], [["Austin-Round Rock-San Marcos, TX Metro Area", 2_400_000],
                                  ["Dallas-Fort Worth-Arlington, TX Metro Area", 7_900_000]], "metro and micro areas"),
        (["geo_id", "name", "state_name", "population"],
         [["5001800US4821", "Congressional District 21 (118th Congress), Texas", "Texas", 780_000],
          ["5001800US4835", "Congressional District 35 (118th Congress), Texas", "Texas", 790_000]],
         "congressional districts"),
    ],
)
def test_levels_with_neither_shapes_nor_points_get_a_bar_chart_and_say_why(columns, rows, words):
    spec = charts.build(columns, rows, "map")
    assert spec.kind == "bar" and spec.alternate is None
    assert spec.fallback_reason == (f"census-sage has neither boundaries nor points for {words}, so there is no map: "
                                    "showing a bar chart.")


def test_many_tracts_are_a_table_not_a_map():
    rows = [[f"1400000US48453{i:06d}", "Travis County", "Texas", i] for i in range(100)]
    spec = charts.build(["geo_id", "county_name", "state_name", "population"], rows, "bar")
    assert spec.kind == "table" and "too many" in spec.fallback_reason
    spec = charts.build(["geo_id", "county_name", "state_name", "population"], rows, "map")
    assert spec.kind == "table" and "neither boundaries nor points for census tracts" in spec.fallback_reason


# --- fallbacks ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "columns, rows, hint, kind, reason",
    [
        (["state_name", "population"], [], "bar", "table", "no rows"),
        (["state_name", "state_abbr"], [["Ohio", "OH"], ["Iowa", "IA"]], "bar", "table", "no numeric column"),
        (["state_name", "population"], [["Ohio", 1]], "table", "table", None),
        (["state_name", "population"], [["Ohio", 1], ["Iowa", 2]], "pie", "table", "Unknown display hint"),
        (["geo_id", "state_name", "population"], STATES, "big", "bar", "5 rows"),
        (["state_name", "population"], [["Ohio", 1]], "bar", "big", "single row"),
        (["name", "population"], [["Springfield", 1], ["Shelbyville", 2]], "map", "bar", "no FIPS"),
        (["geo_id", "state_name", "population"], STATES[:1], "map", "big", "single place"),
        (["geo_id", "state_name", "population"], STATES, "grouped", "bar", "Only one numeric column"),
        (["population", "housing_units"], [[1, 2], [3, 4]], "bar", "table", "nothing to label"),
    ],
)
def test_fallbacks(columns, rows, hint, kind, reason):
    spec = charts.build(columns, rows, hint)
    assert spec.kind == kind and spec.hint == hint
    if reason is None:
        assert spec.fallback_reason is None
    else:
        assert reason in spec.fallback_reason
    if spec.chart is not None:
        spec_of(spec)


def test_too_many_places_for_bars_become_a_map_or_a_table():
    counties = [[f"0500000US{i:05d}", f"County {i}", "X", i] for i in range(1001, 1101)]
    spec = charts.build(["geo_id", "county_name", "state_name", "population"], counties, "bar")
    assert spec.kind == "map" and "too many for a bar chart" in spec.fallback_reason
    named = [[f"Place {i}", i] for i in range(100)]
    spec = charts.build(["name", "population"], named, "bar")
    assert spec.kind == "table" and "too many" in spec.fallback_reason


def test_a_big_number_hint_with_many_places_falls_back_to_a_map():
    counties = [[f"0500000US{i:05d}", f"County {i}", "X", i] for i in range(1001, 1101)]
    spec = charts.build(["geo_id", "county_name", "state_name", "population"], counties, "big")
    assert spec.kind == "map" and "too many" in spec.fallback_reason


# --- units and formats -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, unit",
    [("poverty_rate_pct", "percent"), ("unemployment_rate", "percent"), ("insured_share", "percent"),
     ("median_household_income", "dollars"), ("median_gross_rent", "dollars"), ("median_home_value", "dollars"),
     ("gini_index", "index"), ("median_age", "number"), ("population", "count"), ("housing_units", "count")],
)
def test_unit_of(name, unit):
    assert charts.unit_of(name) == unit


@pytest.mark.parametrize(
    "value, unit, fraction, text",
    [(74580, "dollars", False, "$74,580"), (12.34, "percent", False, "12.3%"), (0.1234, "percent", True, "12.3%"),
     (0.48213, "index", False, "0.482"), (1234567, "count", False, "1,234,567"), (38.5, "number", False, "38.5"),
     (None, "count", False, "—"), (Decimal("-5"), "dollars", False, "-$5")],
)
def test_format_value(value, unit, fraction, text):
    assert charts.format_value(value, unit, fraction=fraction) == text


def test_unit_for_variable_reads_the_catalog_label():
    assert charts.unit_for_variable("Median household income (in 2023 inflation-adjusted dollars)") == "dollars"
    assert charts.unit_for_variable("Gini Index", "Gini Index of Income Inequality") == "index"
    assert charts.unit_for_variable("Total", "Total Population") == "count"


def test_humanize():
    assert charts.humanize("median_household_income") == "Median household income"
    assert charts.humanize("poverty_rate_pct") == "Poverty rate"
    assert charts.humanize("hh_income") == "Household income"
    assert charts.humanize("pct_change") == "Percent change" and charts.humanize("change") == "Change"


def test_the_headline_and_the_chart_read_a_result_alike(planner, settings):
    """The command line's headline reads rows as plain columns (no pandas), the charts as a DataFrame: the same
    label, measures, units, margins, series and fractions for every result of the development set, so a sentence
    and the chart beside it never disagree on what the rows are."""
    from dataclasses import fields

    from sage.charts.frame import analyse
    from sage.charts.shape import Layout, read_table
    from sage.evaluate import read_questions

    from .planning import run

    questions = read_questions(ROOT / "tests" / "data" / "questions" / "dev.jsonl")
    compared = 0
    for q in questions:
        plan = planner.plan(q["question"])
        if plan.declined:
            continue
        result = run(plan, settings)
        if not result.rows:
            continue
        table = read_table(result.columns, result.rows)
        shape = analyse(charts.to_frame(result.columns, result.rows), None)
        for f in fields(Layout):
            assert getattr(table.layout, f.name) == getattr(shape, f.name), (q["id"], f.name)
        if table.layout.label:
            assert [table.label(i) for i in range(len(table))] == [
                "" if v is None else str(v) for v in shape.frame[table.layout.label]], q["id"]
        compared += 1
    assert compared >= 35
