"""Introspection of a real database: tables, views, columns, keys, comments; `sage` and system schemas left out."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy

from sage import db
from sage.introspect import IntrospectedSchema, introspect
from tests.conftest import scratch_database

SHOP_DDL = """
CREATE SCHEMA shop;
CREATE SCHEMA sage;
CREATE TABLE shop.customers (
    id bigserial PRIMARY KEY,
    email text NOT NULL UNIQUE,
    region text DEFAULT 'north'
);
CREATE TABLE shop.orders (
    order_id integer NOT NULL,
    line integer NOT NULL,
    customer_id bigint REFERENCES shop.customers (id),
    amount numeric(10, 2),
    PRIMARY KEY (order_id, line)
);
CREATE TABLE shop.regions (code text PRIMARY KEY, name text);
ALTER TABLE shop.customers ADD CONSTRAINT customers_region_fk FOREIGN KEY (region) REFERENCES shop.regions (code);
CREATE VIEW shop.big_orders AS SELECT order_id, amount FROM shop.orders WHERE amount > 100;
CREATE TABLE sage.secret (x int);
CREATE TABLE public.notes (body text);
COMMENT ON TABLE shop.customers IS 'People who bought something';
COMMENT ON COLUMN shop.customers.email IS 'Login and contact address';
COMMENT ON COLUMN shop.orders.amount IS 'Order line total in US dollars';
COMMENT ON VIEW shop.big_orders IS 'Order lines over $100';
INSERT INTO shop.regions VALUES ('north', 'North'), ('south', 'South');
INSERT INTO shop.customers (email) SELECT 'c' || g || '@example.com' FROM generate_series(1, 250) g;
ANALYZE shop.customers;
"""


@pytest.fixture(scope="module")
def shop_url(settings):
    """A throwaway database on the session server with two schemas, keys and comments."""
    with scratch_database(settings, "introspect") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SHOP_DDL)
        yield url


@pytest.fixture(scope="module")
def shop(shop_url) -> IntrospectedSchema:
    engine = sqlalchemy.create_engine("postgresql+psycopg://" + shop_url.split("://", 1)[1])
    try:
        yield introspect(engine, schemas=("shop",))
    finally:
        engine.dispose()


def test_tables_and_views_with_kind_estimate_and_comment(shop):
    assert shop.refs == ["shop.big_orders", "shop.customers", "shop.orders", "shop.regions"]
    customers = shop.table("shop.customers")
    assert customers.kind == "table"
    assert customers.comment == "People who bought something"
    assert customers.row_estimate == 250  # analyzed above
    view = shop.table("big_orders")
    assert view.kind == "view" and view.row_estimate is None and view.comment == "Order lines over $100"
    assert shop.table("shop.orders").row_estimate is None  # never analyzed: unknown, not zero


def test_columns_types_defaults_and_comments(shop):
    customers = shop.table("shop.customers")
    assert [c.name for c in customers.columns] == ["id", "email", "region"]
    id_, email, region = customers.columns
    assert id_.type == "bigint" and id_.primary_key and not id_.nullable
    assert id_.default and id_.default.startswith("nextval(")
    assert email.type == "text" and not email.nullable and email.comment == "Login and contact address"
    assert region.nullable and region.default == "'north'::text"
    amount = shop.table("shop.orders").column("amount")
    assert amount.type == "numeric(10,2)" and amount.comment == "Order line total in US dollars"


def test_primary_and_foreign_keys(shop):
    orders = shop.table("shop.orders")
    keys = {c.name: (c.primary_key, c.foreign_key) for c in orders.columns}
    assert keys == {
        "order_id": (True, None),
        "line": (True, None),
        "customer_id": (False, "shop.customers.id"),
        "amount": (False, None),
    }
    assert shop.table("shop.customers").column("region").foreign_key == "shop.regions.code"


def test_sage_and_system_schemas_are_never_described(shop_url):
    with psycopg.connect(shop_url) as conn:
        everything = introspect(conn, schemas=None)
        asked = introspect(conn, schemas=("sage", "pg_catalog", "information_schema", "shop"))
    assert {t.schema for t in everything.tables} == {"public", "shop"}
    assert {t.schema for t in asked.tables} == {"shop"}
    assert "public.notes" in everything.refs


def test_unknown_schema_is_empty_not_an_error(shop_url):
    with psycopg.connect(shop_url) as conn:
        assert introspect(conn, schemas=("nowhere",)).tables == []


def test_census_tables_of_the_product_database(settings):
    schema = introspect(db.engine(settings))
    assert {"public.geography", "public.variables", "public.estimates", "public.estimates_by_vintage"} <= set(
        schema.refs)
    for ref in ("public.geography", "public.variables", "public.estimates", "public.estimates_by_vintage"):
        table = schema.table(ref)
        assert table.comment  # every census table, view and column carries a COMMENT ON
        assert all(c.comment for c in table.columns), ref
    estimates = schema.table("public.estimates_by_vintage")
    fks = {c.name: c.foreign_key for c in estimates.columns if c.foreign_key}
    assert fks == {"geo_id": "public.geography.geo_id", "variable_code": "public.variables.variable_code"}
    assert [c.name for c in estimates.columns if c.primary_key] == ["geo_id", "variable_code", "vintage"]
    view = schema.table("public.estimates")
    assert view.kind == "view" and view.row_estimate is None
    assert [c.name for c in view.columns] == ["geo_id", "variable_code", "estimate", "margin_error", "source",
                                              "vintage"]
    assert not [t for t in schema.tables if t.schema == "sage"]
