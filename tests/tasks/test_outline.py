"""Black-box: a file's outline (`file_outline`, `repoctx outline PATH`) and task context's
`outline` option, through the CLI and `repoctx serve` with the official MCP client, on files
written here whose definitions are known line by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli, write

RUST = """\
//! Orders.
use std::fmt;

/// An order.
pub struct Order {
    total: u64,
}

impl Order {
    pub fn new(total: u64) -> Self {
        Order { total }
    }

    fn discounted(&self, pct: u64) -> u64 {
        self.total * (100 - pct) / 100
    }
}

pub enum State { Open, Paid }

pub trait Priced {
    fn price(&self) -> u64;
}
"""
PYTHON = '''\
"""Carts."""
import os


class Cart:
    """A cart."""

    def __init__(self):
        self.items = []

    @property
    def size(self):
        def count():
            return len(self.items)
        return count()


async def checkout(cart: Cart) -> int:
    return cart.size
'''
GO = """\
package shop

import "fmt"

type Store struct {
	items map[string]int
}

func (s *Store) Get(k string) int {
	return s.items[k]
}

func Hello() {
	fmt.Println("hi")
}
"""
TS = """\
import { x } from './x';

export interface Item {
  id: string;
}

export class Basket {
  private items: Item[] = [];

  add(item: Item): void {
    this.items.push(item);
  }
}

export const total = (b: Basket): number => {
  return 0;
};

export function render(b: Basket): string {
  return `${total(b)}`;
}
"""
JAVA = """\
package shop;

import java.util.List;

public class Invoice {
    private final List<String> lines;

    public Invoice(List<String> lines) {
        this.lines = lines;
    }

    public int count() {
        return lines.size();
    }
}

interface Payable {
    void pay();
}
"""
CSHARP = """\
using System.Collections.Generic;

namespace Billing;

[Serializable]
public sealed class Ledger<T> where T : IEntry
{
    private readonly List<T> entries = new();

    public Ledger(int capacity) : base()
    {
        entries.Capacity = capacity;
    }

    public IEnumerable<R> Select<R>(Func<T, R> map) => entries.Select(map);

    public int Count => entries.Count;
}

public interface IEntry
{
    decimal Amount { get; }
}
"""
C = """\
#include <stdlib.h>
#define RING_MAX(r) ((r)->cap - 1)

typedef struct ring {
    char *buf;
    size_t cap;
} ring;

static size_t
ring_free(const ring *r)
{
    return RING_MAX(r);
}

ring *ring_new(size_t cap) {
    ring *r = malloc(sizeof(*r));
    r->buf = malloc(cap);
    return r;
}
"""
CPP = """\
#pragma once

namespace mem {

template <typename T>
class arena {
 public:
  explicit arena(size_t n) : size_(n) {}
  auto size() const noexcept -> size_t { return size_; }

 private:
  size_t size_;
};

}  // namespace mem
"""
KOTLIN = """\
package app

data class Receipt(val lines: List<String>) {
    fun count(): Int = lines.size

    override fun toString(): String {
        return lines.joinToString("\\n")
    }

    companion object {
        fun empty() = Receipt(emptyList())
    }
}

fun List<String>.toReceipt(): Receipt = Receipt(this)
"""
SWIFT = """\
import Foundation

public struct Wallet {
    var cards: [String]

    public init(cards: [String] = []) {
        self.cards = cards
    }

    mutating func add<C: StringProtocol>(_ card: C) {
        cards.append(String(card))
    }
}

extension Wallet: CustomStringConvertible {
    public var description: String { cards.joined() }
}
"""
PHP = """\
<?php

namespace Web;

final class Coupon
{
    public function __construct(private string $code) {}

    # Applies it once.
    public function apply(array $items): array
    {
        return array_map(fn ($i) => $i, $items);
    }
}

function coupon_code(Coupon $c): string
{
    return (string) $c;
}
"""
RUBY = """\
# frozen_string_literal: true

module Shop
  class Till < Base
    TEMPLATE = <<~TEXT
      def not_a_method
    end
    TEXT

    def self.open(name) = new(name)

    def ring(item)
      items << item
    rescue KeyError
      nil
    end

    class << self
      def ==(other)
        true
      end
    end
  end
end
"""
SCALA = """\
package shop

/** A till. */
final class Till(items: List[Item]) {
  def total: Long = items.map(_.price).sum

  @deprecated("use total", "2.0")
  private[shop] def sum(
      discount: Long
  ): Long = {
    if (discount > 0) {
      total - discount
    } else {
      total
    }
  }
}

object Till {
  val empty = new Till(Nil)
  def apply(items: Item*): Till =
    new Till(items.toList)
}
"""
DART = """\
import 'package:flutter/widgets.dart';

class Badge extends StatelessWidget {
  const Badge({super.key, required this.count});

  final int count;

  bool get empty => count == 0;

  @override
  Widget build(BuildContext context) {
    return Text('$count');
  }
}

String label(int n) => n.toString();
"""
ELIXIR = """\
defmodule Shop.Till do
  @moduledoc \"\"\"
  A till.
  \"\"\"

  @doc "Rings an item up."
  def ring(till, item) do
    [item | till]
  rescue
    _ -> till
  end

  defp empty?([]), do: true
end
"""
LUA = """\
local Till = {}

--[[
function Till.not_a_function()
end
]]

function Till:ring(item)
  table.insert(self.items, item)
end

local function total(items)
  return #items
end

return Till
"""
HASKELL = """\
module Shop.Till where

data Till = Till [Int]

ring :: Int -> Till -> Till
ring x (Till xs) =
  Till (x : xs)

instance Show Till where
  show (Till xs) = "till"
"""
ZIG = """\
const std = @import("std");

pub const Till = struct {
    items: std.ArrayList(u32),

    pub fn ring(self: *Till, item: u32) error{OutOfMemory}!void {
        try self.items.append(item);
    }
};
"""
PERL = """\
package Shop::Till;

=head1 NAME

sub not_a_sub { }

=cut

sub ring {
  my ($self, $item) = @_;
  push @{$self->{items}}, $item;
}

1;
"""
R = """\
#' Rings an item up.
ring <- function(till, item) {
  c(till, item)
}

total.till = function(x, ...) sum(x)
"""
JULIA = """\
module Shop

\"\"\"
    ring(till, item)
\"\"\"
function ring(till::Till, item)
    push!(till.items, item)
end

total(t::Till) = sum(t.items)

end
"""
PASCAL = """\
unit Till;

interface

type
  TTill = class(TObject)
  public
    procedure Ring(Item: Integer);
  end;

implementation

procedure TTill.Ring(Item: Integer);
begin
  Inc(FTotal, Item);
end;

end.
"""
FORTRAN = """\
module till
implicit none
contains
subroutine ring(total, item)
integer, intent(inout) :: total
integer, intent(in) :: item
total = total + item
end subroutine ring
end module till
"""
VERILOG = """\
module till (
  input logic clk_i
);
  function automatic int ring(int total, int item);
    return total + item;
  endfunction
endmodule
"""
SHELL = """\
#!/bin/sh
till::ring-up() {
  cat <<EOF
  } no body's {
EOF
  awk '{ s += $1 }
    END { print s }' "$1"
}

function till_total {
  local n=${#items[@]}
  # a `$#` and a `${#` are code
  echo "$n $(printf '%s' "$#")"
}
"""
POWERSHELL = """\
class Till {
    [int] $Total
    [void] Ring([int] $item) {
        $this.Total += $item
    }
}

function Get-TillTotal($till) {
    $text = @"
} not code {
"@
    $till.Total
}
"""
GDSCRIPT = """\
class_name Till
signal rung(item)

func ring(item: int) -> void:
\trung.emit(item)


class Receipt extends RefCounted:
\tstatic func of(total: int) -> Receipt:
\t\treturn Receipt.new()
"""
VUE = """\
<template>
  <button @click="ring(1)">class Till {{ total }}</button>
</template>

<script>
export default defineComponent({
  data() {
    return { total: 0 }
  },
  methods: {
    ring(item) {
      this.$emit('rung', { item })
    }
  }
})
</script>
"""
SVELTE = """\
<script lang="ts">
  let total = $state(0)
  const s = "</scrip" + "t>"
  function ring(item: number) {
    total += item
  }
</script>

<p>{#if total > 0}{total}{/if}</p>
<style>
  p { color: red; }
</style>
"""
FILES = {"ui/Till.vue": VUE, "ui/Till.svelte": SVELTE, "game/till.gd": GDSCRIPT, "bin/till.sh": SHELL, "src/Till.ps1": POWERSHELL, "src/order.rs": RUST, "shop/cart.py": PYTHON, "store/store.go": GO, "web/basket.ts": TS, "app/Invoice.java": JAVA,
         "billing/Ledger.cs": CSHARP, "native/ring.c": C, "native/arena.hpp": CPP, "app/Receipt.kt": KOTLIN,
         "ios/Wallet.swift": SWIFT, "web/Coupon.php": PHP, "lib/till.rb": RUBY,
         "shop/Till.scala": SCALA, "ui/badge.dart": DART, "lib/shop/till.ex": ELIXIR, "lua/till.lua": LUA,
         "src/Shop/Till.hs": HASKELL, "src/till.zig": ZIG, "lib/Shop/Till.pm": PERL, "R/till.R": R,
         "src/Shop.jl": JULIA, "src/Till.pas": PASCAL, "src/till.f90": FORTRAN, "rtl/till.sv": VERILOG}


def d(kind, name, start, end, signature, members=()):
    return {"kind": kind, "name": name, "start": start, "end": end, "signature": signature, "members": list(members)}


def m(kind, name, start, end, signature):
    return {"kind": kind, "name": name, "start": start, "end": end, "signature": signature}


GOLDEN = {
    "src/order.rs": ("Rust", [
        d("struct", "Order", 5, 7, "pub struct Order {"),
        d("impl", "Order", 9, 17, "impl Order {", [
            m("function", "new", 10, 12, "pub fn new(total: u64) -> Self {"),
            m("function", "discounted", 14, 16, "fn discounted(&self, pct: u64) -> u64 {"),
        ]),
        d("enum", "State", 19, 19, "pub enum State { Open, Paid }"),
        d("trait", "Priced", 21, 23, "pub trait Priced {", [m("function", "price", 22, 22, "fn price(&self) -> u64;")]),
    ]),
    "shop/cart.py": ("Python", [
        d("class", "Cart", 5, 15, "class Cart:", [
            m("function", "__init__", 8, 9, "def __init__(self):"),
            m("function", "size", 12, 15, "def size(self):"),
        ]),
        d("function", "checkout", 18, 19, "async def checkout(cart: Cart) -> int:"),
    ]),
    "store/store.go": ("Go", [
        d("struct", "Store", 5, 7, "type Store struct {"),
        d("function", "Get", 9, 11, "func (s *Store) Get(k string) int {"),
        d("function", "Hello", 13, 15, "func Hello() {"),
    ]),
    "web/basket.ts": ("TypeScript", [
        d("interface", "Item", 3, 5, "export interface Item {"),
        d("class", "Basket", 7, 13, "export class Basket {", [m("function", "add", 10, 12, "add(item: Item): void {")]),
        d("function", "total", 15, 17, "export const total = (b: Basket): number => {"),
        d("function", "render", 19, 21, "export function render(b: Basket): string {"),
    ]),
    "app/Invoice.java": ("Java", [
        d("class", "Invoice", 5, 15, "public class Invoice {", [
            m("function", "Invoice", 8, 10, "public Invoice(List<String> lines) {"),
            m("function", "count", 12, 14, "public int count() {"),
        ]),
        d("interface", "Payable", 17, 19, "interface Payable {", [m("function", "pay", 18, 18, "void pay();")]),
    ]),
    # A namespace is no definition (as a Java package is none); an attribute, a property and
    # a field set by a call are none either.
    "billing/Ledger.cs": ("C#", [
        d("class", "Ledger", 6, 18, "public sealed class Ledger<T> where T : IEntry", [
            m("function", "Ledger", 10, 13, "public Ledger(int capacity) : base()"),
            m("function", "Select", 15, 15, "public IEnumerable<R> Select<R>(Func<T, R> map) => entries.Select(map);"),
        ]),
        d("interface", "IEntry", 20, 23, "public interface IEntry"),
    ]),
    # The preprocessor's lines and a macro's call are none; a function whose type is on the
    # line above starts at its name.
    "native/ring.c": ("C", [
        d("struct", "ring", 4, 7, "typedef struct ring {"),
        d("function", "ring_free", 10, 13, "ring_free(const ring *r)"),
        d("function", "ring_new", 15, 19, "ring *ring_new(size_t cap) {"),
    ]),
    "native/arena.hpp": ("C++", [
        d("class", "arena", 6, 13, "class arena {", [
            m("function", "arena", 8, 8, "explicit arena(size_t n) : size_(n) {}"),
            m("function", "size", 9, 9, "auto size() const noexcept -> size_t { return size_; }"),
        ]),
    ]),
    # A companion object has no name, so its functions are the class's.
    "app/Receipt.kt": ("Kotlin", [
        d("class", "Receipt", 3, 13, "data class Receipt(val lines: List<String>) {", [
            m("function", "count", 4, 4, "fun count(): Int = lines.size"),
            m("function", "toString", 6, 8, "override fun toString(): String {"),
            m("function", "empty", 11, 11, "fun empty() = Receipt(emptyList())"),
        ]),
        d("function", "toReceipt", 15, 15, "fun List<String>.toReceipt(): Receipt = Receipt(this)"),
    ]),
    "ios/Wallet.swift": ("Swift", [
        d("struct", "Wallet", 3, 13, "public struct Wallet {", [
            m("function", "init", 6, 8, "public init(cards: [String] = []) {"),
            m("function", "add", 10, 12, "mutating func add<C: StringProtocol>(_ card: C) {"),
        ]),
        d("impl", "Wallet", 15, 17, "extension Wallet: CustomStringConvertible {"),
    ]),
    "web/Coupon.php": ("PHP", [
        d("class", "Coupon", 5, 14, "final class Coupon", [
            m("function", "__construct", 7, 7, "public function __construct(private string $code) {}"),
            m("function", "apply", 10, 13, "public function apply(array $items): array"),
        ]),
        d("function", "coupon_code", 16, 19, "function coupon_code(Coupon $c): string"),
    ]),
    # A module is no definition, nor is `class << self` (its methods are the class's); a
    # heredoc's lines are a string, and a `rescue` at the method's indent is the method's.
    "lib/till.rb": ("Ruby", [
        d("class", "Till", 4, 23, "class Till < Base", [
            m("function", "open", 10, 10, "def self.open(name) = new(name)"),
            m("function", "ring", 12, 16, "def ring(item)"),
            m("function", "==", 19, 21, "def ==(other)"),
        ]),
    ]),
    # A body of one indented expression, a `} else {` at the method's indent, a `val` none.
    "shop/Till.scala": ("Scala", [
        d("class", "Till", 4, 17, "final class Till(items: List[Item]) {", [
            m("function", "total", 5, 5, "def total: Long = items.map(_.price).sum"),
            m("function", "sum", 8, 16, "private[shop] def sum("),
        ]),
        d("class", "Till", 19, 23, "object Till {", [
            m("function", "apply", 21, 22, "def apply(items: Item*): Till ="),
        ]),
    ]),
    # A constructor, a getter and a method; the call of `Text` in a body is none.
    "ui/badge.dart": ("Dart", [
        d("class", "Badge", 3, 14, "class Badge extends StatelessWidget {", [
            m("function", "Badge", 4, 4, "const Badge({super.key, required this.count});"),
            m("function", "empty", 8, 8, "bool get empty => count == 0;"),
            m("function", "build", 11, 13, "Widget build(BuildContext context) {"),
        ]),
        d("function", "label", 16, 16, "String label(int n) => n.toString();"),
    ]),
    # A module's functions, the rescue inside one; the doc heredoc defines nothing.
    "lib/shop/till.ex": ("Elixir", [
        d("class", "Till", 1, 14, "defmodule Shop.Till do", [
            m("function", "ring", 7, 11, "def ring(till, item) do"),
            m("function", "empty", 13, 13, "defp empty?([]), do: true"),
        ]),
    ]),
    # A method and a local function; a commented-out block is none.
    "lua/till.lua": ("Lua", [
        d("function", "ring", 8, 10, "function Till:ring(item)"),
        d("function", "total", 12, 14, "local function total(items)"),
    ]),
    # A function from its signature through its equation, and an instance with its method.
    "src/Shop/Till.hs": ("Haskell", [
        d("type", "Till", 3, 3, "data Till = Till [Int]"),
        d("function", "ring", 5, 7, "ring :: Int -> Till -> Till"),
        d("impl", "Till", 9, 10, "instance Show Till where", [
            m("function", "show", 10, 10, 'show (Till xs) = "till"'),
        ]),
    ]),
    # A struct's method; an error set's braces open no body.
    "src/till.zig": ("Zig", [
        d("struct", "Till", 3, 9, "pub const Till = struct {", [
            m("function", "ring", 6, 8, "pub fn ring(self: *Till, item: u32) error{OutOfMemory}!void {"),
        ]),
    ]),
    # A sub; the one in the POD is none.
    "lib/Shop/Till.pm": ("Perl", [
        d("function", "ring", 9, 12, "sub ring {"),
    ]),
    # A dot is part of an R name (an S3 method).
    "R/till.R": ("R", [
        d("function", "ring", 2, 4, "ring <- function(till, item) {"),
        d("function", "total.till", 6, 6, "total.till = function(x, ...) sum(x)"),
    ]),
    # A function to its end, and one of one line; a module is none.
    "src/Shop.jl": ("Julia", [
        d("function", "ring", 6, 8, "function ring(till::Till, item)"),
        d("function", "total", 10, 10, "total(t::Till) = sum(t.items)"),
    ]),
    # A class's sections stay inside it, to its `end`; a method's body to its own.
    "src/Till.pas": ("Pascal", [
        d("class", "TTill", 6, 9, "TTill = class(TObject)", [
            m("function", "Ring", 8, 8, "procedure Ring(Item: Integer);"),
        ]),
        d("function", "Ring", 13, 16, "procedure TTill.Ring(Item: Integer);"),
    ]),
    # A unit's body need not be indented: it ends at its `end`.
    "src/till.f90": ("Fortran", [
        d("module", "till", 1, 9, "module till", [
            m("function", "ring", 4, 8, "subroutine ring(total, item)"),
        ]),
    ]),
    # The port list's `);` stays inside the module.
    "rtl/till.sv": ("SystemVerilog", [
        d("module", "till", 1, 7, "module till (", [
            m("function", "ring", 4, 6, "function automatic int ring(int total, int item);"),
        ]),
    ]),
    # An inner class and its static function; `class_name` and a signal are none.
    "game/till.gd": ("GDScript", [
        d("function", "ring", 4, 5, "func ring(item: int) -> void:"),
        d("class", "Receipt", 8, 10, "class Receipt extends RefCounted:", [
            m("function", "of", 9, 10, "static func of(total: int) -> Receipt:"),
        ]),
    ]),
    # Its options hold its methods as a class does; the template is no code.
    "ui/Till.vue": ("Vue", [
        d("class", "default", 6, 15, "export default defineComponent({", [
            m("function", "data", 7, 9, "data() {"),
            m("function", "ring", 11, 13, "ring(item) {"),
        ]),
    ]),
    # The script is TypeScript; the template's and the style's braces are none.
    "ui/Till.svelte": ("Svelte", [
        d("function", "ring", 4, 6, "function ring(item: number) {"),
    ]),
    # A name with `-` and `:`; a heredoc's and an awk program's braces are no body's.
    "bin/till.sh": ("Shell", [
        d("function", "till::ring-up", 2, 8, "till::ring-up() {"),
        d("function", "till_total", 10, 14, "function till_total {"),
    ]),
    # A class's methods, a here-string's braces are none.
    "src/Till.ps1": ("PowerShell", [
        d("class", "Till", 1, 6, "class Till {", [
            m("method", "Ring", 3, 5, "[void] Ring([int] $item) {"),
        ]),
        d("function", "Get-TillTotal", 8, 13, "function Get-TillTotal($till) {"),
    ]),
}


def build(root: Path) -> Path:
    for rel, text in FILES.items():
        write(root, rel, text)
    write(root, "README.md", "# Shop\n\nOrders, carts, stores.\n")
    return root


def outline_cli(root: Path, path: str) -> tuple[dict, int]:
    proc = run_cli("outline", path, "--json", cwd=root)
    return json.loads(proc.stdout), proc.returncode


@pytest.mark.parametrize("path", list(GOLDEN))
def test_golden_outlines(tmp_path, path):
    repo = build(tmp_path / "repo")
    answer, code = outline_cli(repo, path)
    assert code == 0, answer
    language, definitions = GOLDEN[path]
    assert answer == {"path": path, "language": language, "lines": FILES[path].count("\n"), "definitions": definitions}


def test_a_file_without_definitions_has_an_empty_outline_and_the_text_view_lists_them(tmp_path):
    repo = build(tmp_path / "repo")
    answer, code = outline_cli(repo, "README.md")
    assert (code, answer["language"], answer["definitions"]) == (0, "Markdown", [])
    text = run_cli("outline", "shop/cart.py", cwd=repo, check=True).stdout
    assert "    5-15    class Cart: class Cart:" in text
    assert "     12-15    function size: def size(self):" in text


@pytest.mark.anyio
async def test_the_tool_answers_as_the_cli(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "file_outline" in listed and listed["file_outline"].output_schema
        for path in [*GOLDEN, "README.md", "../x", "nope.py"]:
            result = await client.call_tool("file_outline", {"path": path})
            assert json.loads(result.content[0].text) == outline_cli(repo, path)[0], path
            assert result.is_error == (path in ("../x", "nope.py"))


@pytest.mark.anyio
async def test_task_context_gives_outlines_only_when_asked_and_within_the_budget(tmp_path):
    repo = build(tmp_path / "repo")
    task = "discounted order total of the Order impl"
    async with mcp_client("--root", str(repo)) as client:
        plain = json.loads((await client.call_tool("task_context", {"task": task, "budget": 600})).content[0].text)
        shaped = json.loads((await client.call_tool("task_context", {"task": task, "budget": 600, "outline": True})).content[0].text)
        tight = json.loads((await client.call_tool("task_context", {"task": task, "budget": 120, "outline": True})).content[0].text)
    assert all("outline" not in f for f in plain["files"])
    top = shaped["files"][0]
    assert top["path"] == "src/order.rs"
    assert top["outline"] == GOLDEN["src/order.rs"][1]
    assert [f["path"] for f in shaped["files"]] == [f["path"] for f in plain["files"]]

    def cost(answer):
        outlines = sum(-(-len(json.dumps(f["outline"], separators=(",", ":"), ensure_ascii=False).encode()) // 4)
                       for f in answer["files"] if "outline" in f)
        return outlines, sum(-(-len(b["text"].encode()) // 4) for b in answer["bundle"])

    for answer in (shaped, tight):
        outlines, pieces = cost(answer)
        assert answer["tokens"] == outlines + pieces <= answer["budget"]
        assert outlines <= answer["budget"] // 2
    assert "outline" not in tight["files"][0] or cost(tight)[0] <= 60
    assert len(tight["bundle"]) <= len(plain["bundle"])


def test_the_cli_gives_the_tool_s_outlines_and_its_text_view_lists_them(tmp_path):
    repo = build(tmp_path / "repo")
    task = "discounted order total of the Order impl"
    answer = json.loads(run_cli("context", task, "--budget", "600", "--outline", "--json", cwd=repo, check=True).stdout)
    assert answer["files"][0]["outline"] == GOLDEN["src/order.rs"][1]
    plain = json.loads(run_cli("context", task, "--budget", "600", "--json", cwd=repo, check=True).stdout)
    assert all("outline" not in f for f in plain["files"])
    text = run_cli("context", task, "--budget", "600", "--outline", cwd=repo, check=True).stdout
    # The outline's lines as `repoctx outline` prints them (after its heading), indented.
    own = run_cli("outline", "src/order.rs", cwd=repo, check=True).stdout.rstrip("\n").split("\n")[1:]
    assert "      outline:\n" + "".join(f"        {line}\n" for line in own) in text
    assert "struct Order" in own[0] and "impl Order" in own[1] and "function new" in own[2]
    assert "outline:" not in run_cli("context", task, "--budget", "600", cwd=repo, check=True).stdout


def _resolved(schema, defs):
    """`schema` with its `$ref`s to `defs` replaced by what they name, without titles."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _resolved(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _resolved(v, defs) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_resolved(v, defs) for v in schema]
    return schema


def test_the_answer_declares_outline_definitions_as_file_outline_does():
    import msgspec

    from repoctx import _core
    from repoctx.tasks.outline import OutlineResult

    _, defs = msgspec.json.schema_components([OutlineResult])
    declared = _resolved(defs["OutlineResult"], defs)["properties"]["definitions"]
    answer = json.loads(_core.TaskAnswer.JSON_SCHEMA)
    file = answer["properties"]["files"]["items"]
    assert file["properties"]["outline"] == declared
    assert "outline" not in file["required"]


# Definitions the line grammar missed or cut short: a body after a `{}` in the parameters
# (a TypeScript default, Go's `interface{}`), private `#` methods, and functions given to a
# property (`app.use = function use(fn) {`, the way Express's own files define everything).
SHAPES = {
    "web/client.ts": ("""\
export class Client {
  constructor(input: string, options: Options = {}) {
    this.input = input;
  }

  async #retry(error: unknown): Promise<void> {
    await sleep(1);
  }

  static #normalize(p: Params): Params {
    return p;
  }
}
""", [d("class", "Client", 1, 13, "export class Client {", [
        m("function", "constructor", 2, 4, "constructor(input: string, options: Options = {}) {"),
        m("function", "retry", 6, 8, "async #retry(error: unknown): Promise<void> {"),
        m("function", "normalize", 10, 12, "static #normalize(p: Params): Params {"),
    ])]),
    "store/any.go": ("""\
package store

func Set(key string, value interface{}) {
	items[key] = value
}

func Keys(m map[string]struct{}) []string {
	return nil
}
""", [d("function", "Set", 3, 5, "func Set(key string, value interface{}) {"),
      d("function", "Keys", 7, 9, "func Keys(m map[string]struct{}) []string {")]),
    "lib/response.js": ("""\
var res = Object.create(http.ServerResponse.prototype);

res.status = function status(code) {
  this.statusCode = code;
  return this;
};

res.json = (obj) => {
  return this.send(JSON.stringify(obj));
};

Router.prototype.route = async function (path) {
  return new Route(path);
};

res.handlers = list.map(h => {
  return h;
});
""", [d("function", "status", 3, 6, "res.status = function status(code) {"),
      d("function", "json", 8, 10, "res.json = (obj) => {"),
      d("function", "route", 12, 14, "Router.prototype.route = async function (path) {")]),
}


@pytest.mark.parametrize("path", list(SHAPES))
def test_bodies_after_braces_in_parameters_private_methods_and_property_functions(tmp_path, path):
    text, definitions = SHAPES[path]
    write(tmp_path, path, text)
    answer, code = outline_cli(tmp_path, path)
    assert code == 0, answer
    assert answer["definitions"] == definitions


WRAPPED_JAVA = """\
package io;

public class Reader {
    public Token next()
        throws IOException
    {
        return read(0);
    }

    @Override
    protected Reader(int size) throws IOException
    {
        this.size = size;
    }

    void close() throws IOException,
        InterruptedException {
        done = true;
    }

    enum Mode {
        FAST("f"),
        SLOW("s")
        ;
        Mode(String s) {
        }
    }
}
"""


def test_java_signatures_whose_body_opens_below_are_definitions(tmp_path):
    """A `throws` clause wrapped, or the `{` on a line of its own: the method is still one
    (not an enum constant ending its line with `)`)."""
    repo = tmp_path / "repo"
    write(repo, "io/Reader.java", WRAPPED_JAVA)
    answer, code = outline_cli(repo, "io/Reader.java")
    assert code == 0, answer
    assert answer["definitions"] == [d("class", "Reader", 3, 28, "public class Reader {", [
        m("function", "next", 4, 8, "public Token next()"),
        m("function", "Reader", 11, 14, "protected Reader(int size) throws IOException"),
        m("function", "close", 16, 19, "void close() throws IOException,"),
        m("enum", "Mode", 21, 27, "enum Mode {"),
    ])]
