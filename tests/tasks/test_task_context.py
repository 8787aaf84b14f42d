"""Black-box: `task_context` through `repoctx serve` and the official MCP client, on a small
repository built here, where the file and the function a task is about are known."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import mcp_client, run_cli, write
from repoctx import _core

HELPERS = "".join(f"def line_total_{i}(order):\n    return sum(l.price for l in order.lines[{i}:])\n\n\n" for i in range(40))
DISCOUNT = (
    "def apply_discount(order, coupon):\n"
    '    """Take the coupon\'s percentage off the order total."""\n'
    "    rate = coupon.percent / 100\n"
    "    return order.total * (1 - rate)\n"
)
ORDERS = (
    '"""Orders: building, totals and discounts."""\n'
    "from shop.tax import tax_rate\n\n\n"
    + HELPERS
    + DISCOUNT
    + "\n\n"
    + HELPERS.replace("line_total_", "line_weight_")
)
FILES = {
    "shop/orders.py": ORDERS,
    "shop/tax.py": "def tax_rate(country):\n    return {'fr': 0.2}.get(country, 0.0)\n",
    "shop/cli.py": "from shop.orders import line_total_1\n\n\ndef main():\n    print(line_total_1(None))\n",
    "shop/cart_view.py": "def render_cart(cart):\n    return '<ul>' + ''.join(f'<li>{i}</li>' for i in cart) + '</ul>'\n",
    "web/page.ts": "export function renderPage(title: string): string {\n  return `<h1>${title}</h1>`;\n}\n",
    "README.md": "# Shop\n\nA small shop: carts, orders, taxes.\n",
}
DISCOUNT_START = ORDERS.splitlines().index("def apply_discount(order, coupon):") + 1
DISCOUNT_END = DISCOUNT_START + DISCOUNT.count("\n") - 1


def build(root: Path, tokenizer: str = "bytes4") -> Path:
    for rel, text in FILES.items():
        write(root, rel, text)
    if tokenizer != "bytes4":
        write(root, ".repoctx/config.yaml", f"tokenizer: {tokenizer}\n")
    return root


def count(text: str, tokenizer: str) -> int:
    return -(-len(text.encode()) // 4) if tokenizer == "bytes4" else _core.count_tokens(tokenizer, [text])[0]


async def call(client, **args) -> tuple[dict, bool]:
    result = await client.call_tool("task_context", args)
    return json.loads(result.content[0].text), bool(result.is_error)


@pytest.mark.anyio
async def test_the_function_a_task_names_ranks_first_and_is_in_the_bundle(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        answer, failed = await call(client, task="apply_discount gives the wrong total for percentage coupons", budget=400)
        tight, _ = await call(client, task="apply_discount gives the wrong total for percentage coupons", budget=80)
    assert not failed, answer
    assert list(answer) == ["task", "budget", "tokens", "files", "bundle"]
    top = answer["files"][0]
    assert list(top) == ["path", "score", "why", "regions"]
    assert top["path"] == "shop/orders.py", answer["files"]
    assert "defines `apply_discount`" in top["why"]
    assert {"start": DISCOUNT_START, "end": DISCOUNT_END, "symbol": "apply_discount", "kind": "function"} in top["regions"]
    first = answer["bundle"][0]
    assert list(first) == ["path", "start", "end", "text"]
    shown = [b for b in answer["bundle"] if b["path"] == "shop/orders.py" and b["start"] <= DISCOUNT_START and DISCOUNT_END <= b["end"]]
    assert shown, answer["bundle"]
    lines = ORDERS.splitlines(keepends=True)
    assert shown[0]["text"] == "".join(lines[shown[0]["start"] - 1:shown[0]["end"]]), "the file's lines as they are"
    assert answer["tokens"] == sum(count(b["text"], "bytes4") for b in answer["bundle"]) <= 400
    # A tight budget holds the region (and two lines around it) whole, not the top of a 340-line file
    # instead; what is left of it may go to the file's head (its imports).
    pieces = [(b["start"], b["end"]) for b in tight["bundle"] if b["path"] == "shop/orders.py"]
    assert (DISCOUNT_START - 2, DISCOUNT_END + 2) in pieces, pieces
    assert sum(e - s + 1 for s, e in pieces) < 20, pieces
    assert tight["bundle"][0]["path"] == "shop/orders.py", "the top file's piece comes first"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    budgets=st.lists(st.one_of(st.integers(1, 120), st.integers(1, 20_000)), min_size=4, max_size=12),
    tokenizer=st.sampled_from(["bytes4", "o200k"]),
    task=st.sampled_from(["apply_discount coupon", "order totals and taxes", "render the cart page", "zzz nothing"]),
)
def test_the_bundle_never_exceeds_the_budget(tmp_path_factory, budgets, tokenizer, task):
    repo = build(tmp_path_factory.mktemp("repo"), tokenizer)

    async def check() -> None:
        async with mcp_client("--root", str(repo)) as client:
            for budget in budgets:
                answer, failed = await call(client, task=task, budget=budget)
                assert not failed, answer
                counted = sum(count(b["text"], tokenizer) for b in answer["bundle"])
                assert answer["tokens"] == counted <= budget, (budget, answer["tokens"], counted)
                assert answer["budget"] == budget

    anyio.run(check)


@pytest.mark.anyio
async def test_given_paths_pull_their_imported_neighbours_up(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        alone, _ = await call(client, task="render the cart page")
        pulled, _ = await call(client, task="render the cart page", paths=["shop/orders.py"])
    ranked = [f["path"] for f in alone["files"]]
    assert "shop/tax.py" not in ranked, ranked
    by_path = {f["path"]: f for f in pulled["files"]}
    assert "shop/tax.py" in by_path, pulled["files"]
    assert "imported by shop/orders.py (given)" in by_path["shop/tax.py"]["why"]
    assert "imports shop/orders.py (given)" in by_path["shop/cli.py"]["why"]


@pytest.mark.anyio
async def test_an_edit_between_two_calls_is_followed(tmp_path):
    repo = build(tmp_path / "repo")
    task = "refund_shipping_fee when an order is cancelled"
    async with mcp_client("--root", str(repo)) as client:
        before, _ = await call(client, task=task)
        assert all(f["path"] != "shop/tax.py" or "defines" not in f["why"] for f in before["files"])
        write(repo, "shop/tax.py", FILES["shop/tax.py"] + "\n\ndef refund_shipping_fee(order):\n    return order.shipping\n")
        write(repo, "shop/returns/policy.py", "def cancel_order(order):\n    return refund_shipping_fee(order)\n")
        after, _ = await call(client, task=task)
        (repo / "shop/tax.py").write_text(FILES["shop/tax.py"])
        gone, _ = await call(client, task=task)
    assert after["files"][0]["path"] == "shop/tax.py", after["files"]
    assert "defines `refund_shipping_fee`" in after["files"][0]["why"]
    assert any(b["path"] == "shop/tax.py" and "def refund_shipping_fee" in b["text"] for b in after["bundle"])
    assert "shop/returns/policy.py" in [f["path"] for f in after["files"]], "a new directory's file is read"
    assert not any("def refund_shipping_fee" in b["text"] for b in gone["bundle"]), "the edit back is followed too"


@pytest.mark.anyio
async def test_wrong_arguments_fail_with_a_code(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        for args, code in [
            ({"task": "x", "budget": 0}, "invalid_argument"),
            ({"task": "  "}, "invalid_argument"),
            ({"task": "x", "signals_off": ["vibes"]}, "invalid_argument"),
            ({"task": "x", "limit": 0}, "invalid_argument"),
            ({"task": "x", "paths": ["../outside.py"]}, "invalid_path"),
        ]:
            answer, failed = await call(client, **args)
            assert failed and answer["error"]["code"] == code, (args, answer)


@pytest.mark.anyio
async def test_signals_switch_off_by_name(tmp_path):
    repo = build(tmp_path / "repo")
    async with mcp_client("--root", str(repo)) as client:
        on, _ = await call(client, task="apply_discount")
        off, _ = await call(client, task="apply_discount", signals_off=["symbols"])
        nothing, _ = await call(client, task="apply_discount", signals_off=list(_core.TASK_SIGNALS))
    assert "defines `apply_discount`" in on["files"][0]["why"]
    assert all("defines" not in f["why"] for f in off["files"])
    assert nothing["files"] == [] and nothing["bundle"] == [] and nothing["tokens"] == 0


def test_the_cli_takes_the_task_and_repeated_paths(tmp_path):
    repo = build(tmp_path / "repo")
    proc = run_cli("context", "render the cart page", "--path", "shop/orders.py", "--budget", "300", "--json",
                   "--root", str(repo), check=True)
    answer = json.loads(proc.stdout)
    assert answer["budget"] == 300 and "shop/tax.py" in [f["path"] for f in answer["files"]]
    human = run_cli("context", "apply_discount", "--root", str(repo), check=True).stdout
    assert human.startswith(" 1. shop/orders.py") and "def apply_discount(order, coupon):" in human


def test_words_as_people_write_them_find_the_code_and_its_region(tmp_path):
    """Through the CLI: "URLs", "parser", "filepath" and a task of function words meet code that
    says `parse_url`, `UrlParser`, `file_path`; in a large Java file the method the task is about
    is the region shown, not the file's head."""
    repo = tmp_path / "repo"
    write(repo, "net/links.py", "def parse_url(text):\n    return text.split('/')\n")
    write(repo, "net/mail.py", "def send(message):\n    return message\n")
    write(repo, "io/paths.py", "def join(file_path, name):\n    return file_path + '/' + name\n")
    steps = "".join(f"  public int step{i}(int x) {{\n    return x + {i};\n  }}\n\n" for i in range(80))
    write(repo, "src/Ledger.java", "package shop;\n\npublic class Ledger {\n" + steps
          + "  public long refundTotal(long paid) {\n    return paid - fee;\n  }\n}\n")

    def ranked(task: str, budget: int = 4000) -> dict:
        return json.loads(run_cli("context", task, "--budget", str(budget), "--json", "--root", str(repo),
                                  check=True).stdout)

    assert ranked("the parser of URLs is wrong")["files"][0]["path"] == "net/links.py"
    assert ranked("which filepath is it")["files"][0]["path"] == "io/paths.py"
    assert ranked("what would they do about it")["files"] == [], "function words match nothing"
    ledger = ranked("refund totals are off", budget=80)
    assert ledger["files"][0]["path"] == "src/Ledger.java"
    assert ledger["files"][0]["regions"][0]["symbol"] == "refundTotal"
    assert {p["path"] for p in ledger["bundle"]} == {"src/Ledger.java"}
    assert any("public long refundTotal(long paid) {" in p["text"] for p in ledger["bundle"])
    assert all("step40(" not in p["text"] for p in ledger["bundle"]), "not the steps in between"


def test_templates_nix_and_bazel_files_are_read(tmp_path):
    """Through the CLI: a Phoenix template, a Nix flake and a Bazel build file are files task
    context reads (they were no kind of file, and not read at all)."""
    repo = tmp_path / "repo"
    write(repo, "lib/shop_web/cart.html.heex", '<button class="checkout">Pay the basket</button>\n')
    write(repo, "flake.nix", "{\n  devShells.default = pkgs.mkShell { packages = [ pkgs.rustfmt ]; };\n}\n")
    write(repo, "tools/BUILD.bazel", 'py_binary(\n    name = "linter_wrapper",\n    srcs = ["wrap.py"],\n)\n')
    write(repo, "shop/cart.py", "def total(items):\n    return sum(items)\n")

    def first(task: str) -> str:
        answer = json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)
        return answer["files"][0]["path"]

    assert first("the basket checkout button") == "lib/shop_web/cart.html.heex"
    assert first("add rustfmt to the dev shell") == "flake.nix"
    assert first("the linter_wrapper binary") == "tools/BUILD.bazel"


# A large file of each language with definitions beside Java: eighty small methods, then the
# one a task is about, and that method's name.
STEP_AND_REFUND = {
    "src/Ledger.cs": ("namespace Shop;\n\npublic class Ledger\n{\n",
                      "    public int Step{i}(int x)\n    {{\n        return x + {i};\n    }}\n\n",
                      "    public long RefundTotal(long paid) => paid - fee;\n}}\n", "RefundTotal"),
    "src/ledger.c": ("#include \"ledger.h\"\n\n", "int step{i}(int x) {{\n    return x + {i};\n}}\n\n",
                     "long\nrefund_total(long paid)\n{{\n    return paid - fee;\n}}\n", "refund_total"),
    "src/ledger.cpp": ("namespace shop {\nclass Ledger {\n public:\n",
                       "  int step{i}(int x) const {{\n    return x + {i};\n  }}\n\n",
                       "  long refund_total(long paid) const {{\n    return paid - fee_;\n  }}\n}};\n}}\n", "refund_total"),
    "src/Ledger.kt": ("package shop\n\nclass Ledger {\n", "    fun step{i}(x: Int): Int {{\n        return x + {i}\n    }}\n\n",
                      "    fun refundTotal(paid: Long): Long = paid - fee\n}}\n", "refundTotal"),
    "src/Ledger.swift": ("struct Ledger {\n", "    func step{i}(_ x: Int) -> Int {{\n        return x + {i}\n    }}\n\n",
                         "    func refundTotal(paid: Int) -> Int {{\n        return paid - fee\n    }}\n}}\n", "refundTotal"),
    "src/Ledger.php": ("<?php\n\nclass Ledger\n{\n",
                       "    public function step{i}(int $x): int\n    {{\n        return $x + {i};\n    }}\n\n",
                       "    public function refundTotal(int $paid): int\n    {{\n        return $paid - $this->fee;\n    }}\n}}\n",
                       "refundTotal"),
    "lib/ledger.rb": ("module Shop\n  class Ledger\n",
                      "    def step{i}(x)\n      x + {i}\n    end\n\n",
                      "    def refund_total(paid)\n      paid - fee\n    end\n  end\nend\n", "refund_total"),
    "src/Ledger.scala": ("package shop\n\nclass Ledger {\n", "  def step{i}(x: Int): Int =\n    x + {i}\n\n",
                         "  def refundTotal(paid: Long): Long = {{\n    paid - fee\n  }}\n}}\n", "refundTotal"),
    "lib/ledger.dart": ("class Ledger {\n", "  int step{i}(int x) {{\n    return x + {i};\n  }}\n\n",
                        "  int refundTotal(int paid) => paid - fee;\n}}\n", "refundTotal"),
    "lib/shop/ledger.ex": ("defmodule Shop.Ledger do\n", "  def step{i}(x) do\n    x + {i}\n  end\n\n",
                           "  def refund_total(paid), do: paid - fee()\nend\n", "refund_total"),
    "lua/shop/ledger.lua": ("local Ledger = {}\n\n", "function Ledger.step{i}(x)\n  return x + {i}\nend\n\n",
                            "function Ledger:refund_total(paid)\n  return paid - self.fee\nend\n\nreturn Ledger\n",
                            "refund_total"),
    "src/Shop/Ledger.hs": ("module Shop.Ledger where\n\n", "step{i} :: Int -> Int\nstep{i} x = x + {i}\n\n",
                           "refundTotal :: Int -> Int\nrefundTotal paid =\n  paid - fee\n", "refundTotal"),
    "src/ledger.zig": ("const Ledger = struct {\n", "    pub fn step{i}(x: u32) u32 {{\n        return x + {i};\n    }}\n\n",
                       "    pub fn refundTotal(paid: u64) error{{Overdrawn}}!u64 {{\n        return paid - fee;\n    }}\n}};\n",
                       "refundTotal"),
    "lib/Shop/Ledger.pm": ("package Shop::Ledger;\n\n", "sub step{i} {{\n  my ($x) = @_;\n  return $x + {i};\n}}\n\n",
                           "sub refund_total {{\n  my ($self, $paid) = @_;\n  return $paid - $self->fee;\n}}\n\n1;\n",
                           "refund_total"),
    "R/ledger.R": ("#' Ledger steps.\n\n", "step{i} <- function(x) {{\n  x + {i}\n}}\n\n",
                   "refund_total <- function(paid) {{\n  paid - fee\n}}\n", "refund_total"),
    "src/Ledger.jl": ("module Ledger\n\n", "function step{i}(x)\n    x + {i}\nend\n\n",
                      "function refund_total(paid)\n    paid - fee\nend\n\nend\n", "refund_total"),
    "lib/ledger.ml": ("(* The ledger. *)\n\n", "let step{i} x =\n  x + {i}\n\n",
                      "let refund_total paid =\n  paid - fee\n", "refund_total"),
    "src/ledger.erl": ("-module(ledger).\n\n", "step{i}(X) ->\n    X + {i}.\n\n",
                       "refund_total(Paid) ->\n    Paid - fee().\n", "refund_total"),
    "src/shop/ledger.clj": ("(ns shop.ledger)\n\n", "(defn step{i}\n  [x]\n  (+ x {i}))\n\n",
                            "(defn refund_total\n  [paid]\n  (- paid fee))\n", "refund_total"),
    "src/Ledger.pas": ("unit Ledger;\n\nimplementation\n\n",
                       "function Step{i}(X: Integer): Integer;\nbegin\n  Result := X + {i};\nend;\n\n",
                       "function RefundTotal(Paid: Integer): Integer;\nvar\n  Due: Integer;\nbegin\n"
                       "  Result := Paid - fee;\nend;\n\nend.\n", "RefundTotal"),
    "src/shop-ledger.adb": ("package body Shop.Ledger is\n\n",
                            "   function Step{i} (X : Integer) return Integer is\n   begin\n      return X + {i};\n"
                            "   end Step{i};\n\n",
                            "   function Refund_Total (Paid : Integer) return Integer is\n   begin\n"
                            "      return Paid - fee;\n   end Refund_Total;\nend Shop.Ledger;\n", "Refund_Total"),
    "rtl/ledger.vhd": ("package body ledger is\n\n",
                       "  function step{i} (x : integer) return integer is\n  begin\n    return x + {i};\n"
                       "  end function;\n\n",
                       "  function refund_total (paid : integer) return integer is\n  begin\n"
                       "    return paid - fee;\n  end function;\nend package body;\n", "refund_total"),
    "rtl/ledger.sv": ("package ledger;\n\n",
                      "  function automatic int step{i}(int x);\n    return x + {i};\n  endfunction\n\n",
                      "  function automatic int refund_total(int paid);\n    return paid - fee;\n  endfunction\n"
                      "endpackage\n", "refund_total"),
    "src/ledger.f90": ("module ledger\ncontains\n\n",
                       "integer function step{i}(x)\ninteger :: x\nstep{i} = x + {i}\nend function\n\n",
                       "integer function refund_total(paid)\ninteger :: paid\nrefund_total = paid - fee\n"
                       "end function\nend module ledger\n", "refund_total"),
    "src/Ledger.vb": ("Public Module Ledger\n\n",
                      "    Function Step{i}(x As Integer) As Integer\n        Return x + {i}\n    End Function\n\n",
                      "    Function RefundTotal(paid As Integer) As Integer\n        Return paid - fee\n"
                      "    End Function\nEnd Module\n", "RefundTotal"),
    "autoload/ledger.vim": ("\" The ledger.\n\n", "function! ledger#Step{i}(x) abort\n  return a:x + {i}\nendfunction\n\n",
                            "function! ledger#RefundTotal(paid) abort\n  return a:paid - s:fee\nendfunction\n",
                            "RefundTotal"),
    "Shop/Ledger.lean": ("namespace Ledger\n\n", "def step{i} (x : Nat) : Nat :=\n  x + {i}\n\n",
                         "def refundTotal (paid : Nat) : Nat :=\n  paid - fee\n\nend Ledger\n", "refundTotal"),
    "src/ledger.coffee": ("# The ledger.\n\n", "step{i} = (x) ->\n  x + {i}\n\n",
                          "refundTotal = (paid) ->\n  paid - fee\n", "refundTotal"),
    "src/ledger.gd": ("extends Node\n\n", "func step{i}(x: int) -> int:\n\treturn x + {i}\n\n",
                      "func refund_total(paid: int) -> int:\n\treturn paid - fee\n", "refund_total"),
    "bin/ledger.sh": ("#!/bin/sh\n# The ledger.\n\n", "ledger_step{i}() {{\n  echo $(( $1 + {i} ))\n}}\n\n",
                      "ledger_refund-total() {{\n  echo \"$(( $1 - fee ))\"\n}}\n", "ledger_refund-total"),
    "src/Ledger.psm1": ("# The ledger.\n\n", "function Step{i}($x) {{\n    $x + {i}\n}}\n\n",
                        "function Get-RefundTotal {{\n    param($Paid)\n    $Paid - $fee\n}}\n", "Get-RefundTotal"),
    "src/Ledger.vue": ("<template>\n  <p>{{ total }}</p>\n</template>\n\n<script>\nexport default {\n  methods: {\n",
                       "    step{i}(x) {{\n      return x + {i}\n    }},\n",
                       "    refundTotal(paid) {{\n      return paid - this.fee\n    }}\n  }}\n}}\n</script>\n", "refundTotal"),
    "src/Ledger.svelte": ("<script lang=\"ts\">\n", "  function step{i}(x: number) {{\n    return x + {i}\n  }}\n\n",
                          "  function refundTotal(paid: number) {{\n    return paid - fee\n  }}\n</script>\n\n<p>{{total}}</p>\n",
                          "refundTotal"),
}


@pytest.mark.parametrize("path", list(STEP_AND_REFUND))
def test_in_a_large_file_of_each_language_the_method_the_task_is_about_is_shown(tmp_path, path):
    """Through the CLI, in C#, C, C++, Dart, Kotlin, Swift, PHP, Ruby, Scala, Elixir, Lua, Haskell, Zig, Perl,
    R, Julia, OCaml, Erlang, Clojure, Pascal, Ada, VHDL, SystemVerilog, Fortran, Visual Basic, Vim script, Lean,
    CoffeeScript, GDScript, shell, PowerShell and Vue's and Svelte's scripts as in Java: the method a task is about is the region shown, not the file's head nor the
    steps before it."""
    head, step, refund, symbol = STEP_AND_REFUND[path]
    repo = tmp_path / "repo"
    write(repo, path, head + "".join(step.format(i=i) for i in range(80)) + refund.format())
    answer = json.loads(run_cli("context", "refund totals are off", "--budget", "80", "--json",
                                "--root", str(repo), check=True).stdout)
    assert answer["files"][0]["path"] == path
    assert answer["files"][0]["regions"][0]["symbol"] == symbol
    shown = "".join(p["text"] for p in answer["bundle"])
    assert re.search(rf"\b{symbol}[\s(]", shown) and "fee" in shown and not re.search(r"step40\b", shown.lower())


def test_a_long_function_shows_the_lines_the_task_is_about_and_their_helper(tmp_path):
    """Through the CLI: in a function of one 600-line `match` (no members to cut it along), the
    arm the task is about is in a small bundle, not only the function's first lines; and the
    helper that arm calls comes with it, though the task never says the helper's words."""
    repo = tmp_path / "repo"
    arms = "".join(f"        Kind::K{i} => weigh(x, {i}),\n" for i in range(600))
    arms = arms.replace("Kind::K300 => weigh(x, 300),",
                        "Kind::K300 if x.is_protocol() && x.eager => widen_members(x),  // eager protocol")
    write(repo, "src/relation.rs",
          "pub fn check_pair(kind: Kind, x: Ty) -> bool {\n    match kind {\n" + arms + "    }\n}\n\n"
          + "".join(f"fn filler_{i}(a: u32) -> u32 {{\n    a + {i}\n}}\n\n" for i in range(60))
          + "fn widen_members(x: Ty) -> bool {\n    x.members().all(|m| m.ok())\n}\n")
    write(repo, "src/other.rs", "pub fn unrelated() -> u32 {\n    1\n}\n")
    answer = json.loads(run_cli("context", "eager protocol checks are wrong", "--budget", "500", "--json",
                                "--root", str(repo), check=True).stdout)
    text = "".join(p["text"] for p in answer["bundle"] if p["path"] == "src/relation.rs")
    assert "Kind::K300 if x.is_protocol() && x.eager" in text, answer["bundle"]
    assert "fn widen_members(x: Ty) -> bool {" in text, "the helper the best lines call"
    assert "filler_30" not in text


def test_the_function_changed_in_the_last_commits_comes_before_an_equal_one_never_changed(tmp_path):
    """Through the CLI on a git repository: two functions the task's words match alike, in a file
    too large for the budget; the one the last commit changed is in the small bundle, the other
    (first in the file, so first on a tie) is not. With `history` off it is the other way."""
    import subprocess

    repo = tmp_path / "repo"
    fillers = "".join(f"def filler_{i}(a):\n    return a + {i}\n\n\n" for i in range(60))

    def prices(refund_digits: int) -> str:
        return (fillers + "def round_total(order):\n    return round(order.amount_due, 2)\n\n\n"
                + fillers.replace("filler_", "spare_")
                + f"def round_refund(order):\n    return round(order.amount_due, {refund_digits})\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       check=True, capture_output=True)

    write(repo, "shop/prices.py", prices(2))
    write(repo, "shop/other.py", "def unrelated():\n    return 1\n")
    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "prices")
    write(repo, "shop/prices.py", prices(3))
    git("commit", "-qam", "refunds to three digits")

    def shown(*off: str) -> str:
        args = ["context", "rounding of the amount due", "--budget", "30", "--json", "--root", str(repo)]
        answer = json.loads(run_cli(*args, *[a for o in off for a in ("--signals-off", o)], check=True).stdout)
        assert answer["files"][0]["path"] == "shop/prices.py"
        return "".join(p["text"] for p in answer["bundle"])

    assert "def round_refund" in shown() and "def round_total" not in shown()
    assert "def round_total" in shown("history") and "def round_refund" not in shown("history")


def test_a_file_defining_hundreds_of_names_is_not_lifted_by_them(tmp_path):
    """Through the CLI: `registry.py` defines 500 names, among them the four the task writes as
    code, each of which one small file defines too. A file defining far more names than the
    repository's median file counts each of them for less: the file the task's words are about
    ranks first, and the registry last."""
    repo = tmp_path / "repo"
    names = ["emit_frame", "read_chunk", "open_stream", "close_stream"]
    many = "".join(f"def handler_{i}(x):\n    return x + {i}\n\n\n" for i in range(496))
    write(repo, "app/registry.py", '"""Every handler of the app."""\n\n\n' + many
          + "".join(f"def {n}(x):\n    return x\n\n\n" for n in names))
    write(repo, "app/frames.py", '"""Frames: flush the output of a frame before the next chunk is read."""\n\n\n'
          "def emit_frame(frame, out):\n    out.flush()\n    out.write(frame)\n")
    write(repo, "app/chunks.py", "def read_chunk(stream):\n    return stream.read(4096)\n")
    write(repo, "app/streams.py", "def open_stream(path):\n    return open(path)\n\n\ndef close_stream(s):\n    s.close()\n")
    for name in ("config", "log", "paths"):
        write(repo, f"app/{name}.py", f"def load_{name}():\n    return None\n")
    task = "Flush the output in `emit_frame` before `read_chunk` reads the next chunk (between `open_stream` and `close_stream`)"
    answer = json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)
    ranked = [f["path"] for f in answer["files"]]
    assert ranked[0] == "app/frames.py" and ranked[-1] == "app/registry.py", answer["files"]


def test_a_task_no_file_matches_gets_the_code_changed_last_first(tmp_path):
    """Through the CLI on a git repository: "Minor tweaks" holds no word any file holds. The code
    files come ranked by how lately they changed (the last commit's first, tests and docs left
    out), each saying so; with `history` off, or outside git, nothing is ranked."""
    import subprocess

    repo = tmp_path / "repo"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       check=True, capture_output=True)

    write(repo, "shop/orders.py", "def total(order):\n    return order.amount\n")
    write(repo, "shop/tax.py", "def rate(country):\n    return 0.2\n")
    write(repo, "shop/cart.py", "def items(cart):\n    return cart.lines\n")
    write(repo, "tests/test_cart.py", "def test_items():\n    assert True\n")
    write(repo, "README.md", "# Shop\n")
    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "shop")
    write(repo, "shop/tax.py", "def rate(country):\n    return 0.25\n")
    git("commit", "-qam", "rates")
    write(repo, "shop/cart.py", "def items(cart):\n    return list(cart.lines)\n")
    write(repo, "tests/test_cart.py", "def test_items():\n    assert list([])\n")
    git("commit", "-qam", "lists")

    def ranked(*args: str) -> list[dict]:
        return json.loads(run_cli("context", "Minor tweaks", "--json", "--root", str(repo), *args,
                                  check=True).stdout)["files"]

    files = ranked()
    assert [f["path"] for f in files] == ["shop/cart.py", "shop/tax.py", "shop/orders.py"], files
    assert all(f["why"] == _core.TASK_NOTHING_MATCHED for f in files)
    assert ranked("--signals-off", "history") == []
    matched = json.loads(run_cli("context", "cart items", "--json", "--root", str(repo), check=True).stdout)
    assert matched["files"][0]["path"] == "shop/cart.py"



def test_a_module_every_match_imports_is_not_lifted_past_the_file_the_task_is_about(tmp_path):
    """Through the CLI: `shop/types.py` (the money type) is imported by the file the task is
    about and by four others its words match less. Each of the five shares some of its score
    with it, which summed passed the refund file; imports now lift a file to at most 0.9 of the
    best file's score (`IMPORTS_BELOW`): the refund file ranks first and the type second."""
    repo = tmp_path / "repo"
    write(repo, "shop/types.py", 'class Money:\n    """An amount of money, rounded to cents, in one currency."""\n\n'
          "    def __init__(self, cents):\n        self.cents = cents\n")
    write(repo, "shop/refunds.py", "from shop.types import Money\n\n\ndef refund_amount(order):\n"
          '    """The refund of an order: what was paid, less the fee, rounded to cents."""\n'
          "    return Money(round(order.paid - order.fee))\n")
    for name in ("orders", "invoices", "payments", "coupons"):
        write(repo, f"shop/{name}.py", f"from shop.types import Money\n\n\ndef {name}_refund(items):\n"
              f'    """The refund amount of the {name}, shown as it is."""\n'
              "    return Money(sum(i.cents for i in items))\n")
    answer = json.loads(run_cli("context", "The refund amount is not rounded to cents", "--json", "--root", str(repo),
                                check=True).stdout)
    assert [f["path"] for f in answer["files"]][:2] == ["shop/refunds.py", "shop/types.py"], answer["files"]


def test_a_top_file_whose_regions_no_word_of_the_task_is_in_still_shows(tmp_path):
    """Through the CLI: the task names a file (`src/pathutil.rs`) none of whose lines say its
    words, and a larger file says them all through. The named file ranks first and its code
    is in the small bundle, from its head, rather than only the other file's matching lines."""
    repo = tmp_path / "repo"
    write(repo, "src/pathutil.rs",
          "use std::path::Path;\n\n"
          "pub fn is_hidden(p: &Path) -> bool {\n    p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))\n}\n\n"
          "pub fn strip_prefix<'a>(prefix: &Path, p: &'a Path) -> Option<&'a Path> {\n    p.strip_prefix(prefix).ok()\n}\n")
    write(repo, "src/cleaner.rs", "".join(
        f"/// Cleans up step {i} of the tidy-up.\npub fn clean_up_{i}(x: u32) -> u32 {{\n    x + {i} // clean up\n}}\n\n"
        for i in range(60)))
    answer = json.loads(run_cli("context", "clean up src/pathutil.rs", "--budget", "200", "--json",
                                "--root", str(repo), check=True).stdout)
    assert answer["files"][0]["path"] == "src/pathutil.rs", answer["files"]
    shown = "".join(p["text"] for p in answer["bundle"] if p["path"] == "src/pathutil.rs")
    assert "pub fn is_hidden(p: &Path) -> bool {" in shown, answer["bundle"]


def test_the_code_ranks_and_is_bundled_before_a_test_that_says_the_task_more(tmp_path):
    """Through the CLI: a test says the task's words more than the code it tests (every word of
    the task, its path too), yet the code ranks first (a test counts a fifth of its score: at
    half, the test ranked first), and with room for little the code's function is in the bundle."""
    repo = tmp_path / "repo"
    write(repo, "shop/refund.py",
          'def refund_total(order):\n    """What an order refunds."""\n    return order.paid - order.kept\n\n\n'
          + "".join(f"def helper_{i}(order):\n    return order.lines[{i}].price * order.lines[{i}].count\n\n\n"
                    for i in range(10)))
    write(repo, "tests/test_refund.py", "from shop.refund import refund_total\n\n\n" + "".join(
        f"def test_refund_total_{i}():\n    # the refund total forgets the fee: refund total less the fee, fee kept\n"
        f"    assert refund_total(Order(paid={i}, fee=1)) == {i} - 1\n\n\n" for i in range(3)))
    answer = json.loads(run_cli("context", "the refund total forgets the fee", "--budget", "60", "--json",
                                "--root", str(repo), check=True).stdout)
    assert [f["path"] for f in answer["files"]] == ["shop/refund.py", "tests/test_refund.py"]
    code = "".join(p["text"] for p in answer["bundle"] if p["path"] == "shop/refund.py")
    assert "def refund_total(order):" in code, answer["bundle"]


def test_a_release_task_ranks_the_file_holding_the_version_first(tmp_path):
    """Through the CLI: "Release version 2.4.0" shares only `version` and `release` with the
    package's `__init__.py`, which holds `__version__`; files that talk of releases and versions
    at length match those words better. A task announcing a release (a version number with the
    word version or release) names the file holding the version by convention: it ranks first,
    saying why; without the number it is an ordinary task."""
    repo = tmp_path / "repo"
    write(repo, "pkg/__init__.py", 'from pkg.client import Client\n\n__version__ = "2.4.0.dev"\n')
    write(repo, "pkg/client.py", "class Client:\n    def send(self, request):\n        return request\n")
    write(repo, "pkg/compat.py", '"""Release compatibility: which version of the protocol each release speaks."""\n\n\n'
          "def release_version(release):\n    return release.version\n\n\n"
          "def version_of(release):\n    return release.version or release.previous_version\n")
    write(repo, "pkg/upgrade.py", '"""Upgrade a stored version to the version of this release."""\n\n\n'
          "def upgrade_version(store, version):\n    store.version = version\n")

    def ranked(task: str) -> list[dict]:
        return json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)["files"]

    files = ranked("Release version 2.4.0")
    assert files[0]["path"] == "pkg/__init__.py", files
    assert "holds the version a release changes" in files[0]["why"]
    assert ranked("Release version")[0]["path"] != "pkg/__init__.py"


def test_a_version_number_alone_is_a_release_and_a_program_s_main_holds_it_where_no_version_file_does(tmp_path):
    """Through the CLI: fzf's release commits say only "0.74.0" and change `main.go`, which
    holds `var version`; no word of the task is in any file. A first line that is a version
    number alone announces a release, and where no file of the version names (`version.go`,
    `__init__.py`, …) holds the word, a program's `main` does. A two-part number with the word
    version is a toolchain's ("bump minimum Go version to 1.24"), not a release."""
    repo = tmp_path / "repo"
    write(repo, "main.go", 'package main\n\nvar version = "0.73"\n\nfunc main() {\n\tprintln(version)\n}\n')
    write(repo, "src/terminal.go", "package fzf\n\n// Render draws the finder.\nfunc Render() {}\n")
    write(repo, "src/options.go", "package fzf\n\n// Parse reads the options, and prints the version.\nfunc Parse() {}\n")

    def ranked(task: str) -> list[dict]:
        return json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)["files"]

    files = ranked("0.74.0")
    assert [f["path"] for f in files[:1]] == ["main.go"], files
    assert "holds the version a release changes" in files[0]["why"]

    write(repo, "version.go", 'package main\n\n// The version of this build.\nconst Version = "0.73.0"\n')
    files = ranked("v0.74.0")
    assert files[0]["path"] == "version.go", files
    assert not any("holds the version a release changes" in f["why"] for f in files[1:]), files
    assert not any("holds the version a release changes" in f["why"]
                   for f in ranked("bump minimum Go version to 1.24")), "a toolchain's version is no release"


def test_a_version_number_marked_or_with_a_pre_release_tail_is_a_release_and_sphinx_s_conf_follows(tmp_path):
    """Through the CLI: alembic's release commits say "- 1.16.4" and change the `release` of
    Sphinx's `docs/build/conf.py`; requests' say "v2.34.0.dev1". Both are releases: the
    package's `__init__.py` comes first, and Sphinx's `conf.py` right after it, though it says
    `release` and `version` more (most projects' `conf.py` reads the version from the package)."""
    repo = tmp_path / "repo"
    write(repo, "pkg/__init__.py", 'from pkg.models import Request\n\n__version__ = "2.34.0"\n')
    write(repo, "pkg/models.py", "class Request:\n    def prepare(self):\n        return self\n")
    write(repo, "docs/build/conf.py",
          '# The release and version of the docs.\nproject = "pkg"\nversion = "2.34"\nrelease = "2.34.0"\n')

    def ranked(task: str) -> list[str]:
        files = json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)["files"]
        return [f["path"] for f in files if "holds the version a release changes" in f["why"]]

    for task in ("- 2.34.1", "v2.34.0.dev1", "Release version 2.35.0rc1"):
        assert ranked(task) == ["pkg/__init__.py", "docs/build/conf.py"], task
    assert ranked("- 2.34 and 2.35") == [], "numbers of two parts are no release"


def test_a_file_whose_path_the_task_names_in_words_comes_before_one_its_words_fill(tmp_path):
    """Through the CLI: "Shorten the wait in the backoff example" names `examples/backoff/main.py`
    by its path's words (`example`, `backoff`; `main` says nothing), while `net/retry.py` holds
    the task's words in its text again and again. Path words count apart from the body (the
    share of a file's path words the task says): the example ranks first, saying why."""
    repo = tmp_path / "repo"
    write(repo, "examples/backoff/main.py", "def run(client):\n    client.pause(2)\n    return client.fetch()\n")
    write(repo, "net/retry.py", '"""Retry with backoff: the wait doubles after each try."""\n\n\n'
          "def backoff_wait(attempt):\n    # the wait before the next try\n"
          "    return 2 ** attempt\n\n\ndef shorten_wait(wait):\n    return wait / 2\n")
    write(repo, "net/client.py", "class Client:\n    def fetch(self):\n        return None\n")
    files = json.loads(run_cli("context", "Shorten the wait in the backoff example", "--json", "--root", str(repo),
                               check=True).stdout)["files"]
    assert files[0]["path"] == "examples/backoff/main.py", files
    assert "its path: example, backoff" in files[0]["why"]


def test_a_name_that_qualifies_the_task_s_word_is_not_half_about_it(tmp_path):
    """Through the CLI: "render: keep the frame when resized" is about `ansi_render.py`, the
    renderer that keeps the frame, not `render.py`, the bare interface. Both paths hold `render`;
    a name of two words earns 1 ÷ √2 of the bare name's path share, not half of it, so the file
    saying more of the task comes first (with half, the interface did)."""
    repo = tmp_path / "repo"
    write(repo, "render.py", '"""The render step: what every renderer provides to keep its output."""\n\n\n'
          "class Renderer:\n    def resize(self, width, height):\n        raise NotImplementedError\n\n"
          "    def flush(self):\n        raise NotImplementedError\n")
    write(repo, "ansi_render.py", '"""Draws frames on the terminal screen."""\n\nfrom render import Renderer\n\n\n'
          "class ScreenRenderer(Renderer):\n    def __init__(self):\n        self.width = 0\n"
          "        self.height = 0\n        self.lines = []\n\n    def resize(self, width, height):\n"
          "        # a resized frame keeps its lines; only the size changes\n        self.width = width\n"
          "        self.height = height\n\n    def flush(self):\n        for line in self.lines[: self.height]:\n"
          "            print(line[: self.width])\n        self.lines = []\n")
    for i in range(1, 7):
        write(repo, f"util_{i}.py", f"def helper_{i}(x):\n    return x + {i}\n")
    files = json.loads(run_cli("context", "render: keep the frame when resized", "--json", "--root", str(repo),
                               check=True).stdout)["files"]
    assert [f["path"] for f in files[:2]] == ["ansi_render.py", "render.py"], files
    assert "its path: render" in files[0]["why"]


def test_the_best_function_brings_what_it_calls_before_what_calls_it(tmp_path):
    """Through the CLI: the task is about `settle`, which calls `round_cents` and which
    `checkout` calls; no word of the task is in either. With room for one of them beside
    `settle`, it is the callee, though the caller is shorter and comes first in the file (a
    name is used in many places a change leaves alone: callers are lent a third of what
    callees are)."""
    repo = tmp_path / "repo"

    def unrelated(a: int) -> str:
        return "".join(f"def unrelated_{i}(x):\n    return x * {i} + {i}\n\n\n" for i in range(a, a + 10))

    write(repo, "shop/pay.py",
          "def settle(cart):\n    # the fee is forgotten when the card is declined\n"
          "    fee = cart.fee if cart.declined else 0\n    return round_cents(cart.total + fee)\n\n\n"
          + unrelated(0) + "def checkout(cart):\n    return settle(cart)\n\n\n" + unrelated(10)
          + "def round_cents(amount):\n    return int(amount * 100 + 0.5) / 100\n\n\n" + unrelated(20))
    answer = json.loads(run_cli("context", "the fee of a declined card is forgotten", "--budget", "60", "--json",
                                "--root", str(repo), check=True).stdout)
    shown = "".join(p["text"] for p in answer["bundle"])
    assert "def settle(cart):" in shown, answer["bundle"]
    assert "def round_cents(amount):" in shown, answer["bundle"]
    assert "def checkout(cart):" not in shown, answer["bundle"]


def test_the_file_that_says_a_word_of_the_task_again_and_again_beats_one_saying_each_once(tmp_path):
    """Through the CLI: "register Qt types" is about `app/defaults.py`, the table of file types
    (`types` on each of its twenty lines; neither `register` nor `qt` anywhere), while
    `app/names.py` says `register` and `types` once each in a short docstring. A file's words
    are weighed by BM25 at k1 2.0 rather than 1.2 (`K1_FILES` in rust/tasks/rank.rs), so more
    of a word counts for more before it saturates: the table ranks first. At 1.2 the short file
    did."""
    repo = tmp_path / "repo"
    write(repo, "app/defaults.py", '"""Every file type the search knows."""\n\nDEFAULT = [\n'
          + "".join(f'    ("lang{i}", ["*.l{i}"]),  # types of lang{i}\n' for i in range(20)) + "]\n")
    write(repo, "app/names.py", "".join(f"# another filler line {i} about nothing much\n" for i in range(5))
          + 'def enroll(name):\n    """Register a name among the known ones; see the types."""\n    return name\n')
    for name in ("auth", "log", "paths"):
        write(repo, f"app/{name}.py", f"def load_{name}():\n    return None\n")
    files = json.loads(run_cli("context", "register Qt types", "--json", "--root", str(repo), check=True).stdout)["files"]
    assert [f["path"] for f in files][:2] == ["app/defaults.py", "app/names.py"], files


def test_the_bundle_draws_on_more_files_than_the_ten_listed_only_past_an_8k_budget(tmp_path):
    """Through the CLI: fifteen small files match the task and ten are listed. Within 8k tokens
    the bundle holds lines of the listed files only, though all fifteen would fit (with regions
    of the twenty best, files 11 to 20 took 8 % of an 8k bundle's lines and showed almost
    nothing: coverage@8k +0.060 summed over 32 tuning halves without them); at 32k the ten are
    in and room is left, and the bundle draws on one more file per 800 tokens past 8k, up to
    twenty (coverage@32k up on the tuning halves, 8k answers unchanged)."""
    repo = tmp_path / "repo"
    for i in range(15):
        says = " ".join(["parse the header"] * (15 - i))
        write(repo, f"pkg/part_{i:02}.py", f'def parse_header_{i}(raw):\n    """{says}."""\n    return raw.split(":", 1)\n')
    shown = {}
    for budget in (8000, 32000):
        answer = json.loads(run_cli("context", "parse the header", "--budget", str(budget), "--json",
                                    "--root", str(repo), check=True).stdout)
        listed = [f["path"] for f in answer["files"]]
        assert len(listed) == 10
        shown[budget] = {p["path"] for p in answer["bundle"]}
    assert shown[8000] == set(listed), sorted(shown[8000] ^ set(listed))
    assert shown[32000] == {f"pkg/part_{i:02}.py" for i in range(15)}, sorted(shown[32000])


def test_the_code_the_last_commit_changed_is_listed_though_the_task_says_none_of_its_words(tmp_path):
    """Through the CLI on a git repository: "Fix lint warnings in the parser" follows a commit
    that changed `app/emit.py`, which holds no word of the task. What HEAD's commit changed adds
    0.4 (× 2 ÷ (2 + commits since), for the last sixteen; `last_commits` in rust/tasks/rank.rs),
    so it is listed, below the parser the task names, saying why; the test HEAD's commit changed
    is not lifted by it, and with `history` off the file is not listed at all."""
    import subprocess

    repo = tmp_path / "repo"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       check=True, capture_output=True)

    write(repo, "app/parser.py", "def parse(text):\n    \"\"\"The parser: warnings for lint.\"\"\"\n"
          "    return text.split()\n")
    for name in ("lexer", "config", "render", "cache", "store"):
        write(repo, f"app/{name}.py", f"def {name}_warnings():\n    return []\n")
    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "app")
    write(repo, "app/emit.py", "def write_out(nodes):\n    return nodes\n")
    write(repo, "tests/test_emit.py", "def test_write_out():\n    assert True\n")
    git("add", ".")
    git("commit", "-qm", "add emit")
    write(repo, "app/emit.py", "def write_out(nodes):\n    return list(nodes)\n")
    write(repo, "tests/test_emit.py", "def test_write_out():\n    assert list([])\n")
    git("commit", "-qam", "lists")

    def ranked(*args: str) -> list[dict]:
        return json.loads(run_cli("context", "Fix lint warnings in the parser", "--json", "--root", str(repo),
                                  *args, check=True).stdout)["files"]

    files = ranked()
    paths = [f["path"] for f in files]
    assert paths[0] == "app/parser.py", files
    assert "app/emit.py" in paths, files
    assert "changed in HEAD's commit" in next(f["why"] for f in files if f["path"] == "app/emit.py")
    test = [f for f in files if f["path"] == "tests/test_emit.py"]  # changed with emit.py: co-change lists it
    assert not test or "HEAD's" not in test[0]["why"], files
    assert "app/emit.py" not in [f["path"] for f in ranked("--signals-off", "history")]


def test_a_doc_saying_the_task_over_and_over_ranks_below_code_saying_some_of_it(tmp_path):
    """Through the CLI: `docs/retry.md` says every word of "retry the upload with backoff" six
    times and in its path; `app/client.py` says two of them once, among a dozen other lines, and
    scores about 0.18 of the doc's words. Tests and files that are not code count a tenth of
    their score (`NOT_CODE` in rust/tasks/rank.rs): the code ranks first. At a fifth the doc
    (0.26) did."""
    repo = tmp_path / "repo"
    write(repo, "docs/retry.md", "# Retry\n\n" + "Retry the upload with backoff when the upload times out.\n" * 6)
    write(repo, "app/client.py", 'def send(chunk):\n    """Retry with backoff."""\n'
          + "".join(f"    chunk_{i} = chunk\n" for i in range(1, 11)) + "    return chunk\n")
    write(repo, "app/other.py", "def parse(x):\n    return x\n")
    files = json.loads(run_cli("context", "retry the upload with backoff", "--json", "--root", str(repo),
                               check=True).stdout)["files"]
    assert [f["path"] for f in files] == ["app/client.py", "docs/retry.md"], files


def test_the_last_commits_lift_is_shared_out_when_they_changed_many_files(tmp_path):
    """Through the CLI on two git repositories alike but for HEAD's commit: in one it changed
    `app/emit.py` alone, in the other `app/emit.py` and 48 generated modules. The last commits'
    lift (`last_commits` in rust/tasks/rank.rs) is shared out past 24 code files: where many
    files changed at once, as on a history of many people at work on unrelated things, no one of
    them is as likely to be the next task's, so `app/emit.py` scores less than half as much."""
    import subprocess

    def emit_score(name: str, others: int) -> float:
        repo = tmp_path / name

        def git(*args: str) -> None:
            subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                           check=True, capture_output=True)

        write(repo, "app/parser.py", "def parse(text):\n    \"\"\"The parser: warnings for lint.\"\"\"\n"
              "    return text.split()\n")
        write(repo, "app/emit.py", "def write_out(nodes):\n    return nodes\n")
        for i in range(others):
            write(repo, f"gen/m_{i:02}.py", f"def table_{i}():\n    return {i}\n")
        git("init", "-q", "-b", "main")
        git("add", ".")
        git("commit", "-qm", "app")
        write(repo, "app/emit.py", "def write_out(nodes):\n    return list(nodes)\n")
        for i in range(others):
            write(repo, f"gen/m_{i:02}.py", f"def table_{i}():\n    return {i + 1}\n")
        git("commit", "-qam", "regenerate")
        files = json.loads(run_cli("context", "Fix lint warnings in the parser", "--json", "--root", str(repo),
                                   "--limit", "60", check=True).stdout)["files"]
        assert files[0]["path"] == "app/parser.py", files
        return next(f["score"] for f in files if f["path"] == "app/emit.py")

    alone, among_many = emit_score("alone", 0), emit_score("many", 48)
    assert among_many < 0.5 * alone, (alone, among_many)


def test_of_two_files_saying_the_task_the_one_that_changes_often_comes_first(tmp_path):
    """Through the CLI on a git repository: `examples/coupon_demo.py` says more of "the coupon
    is applied twice to the cart total" than `app/coupon.py`, which changed in 30 commits to the
    demo's one, none of them among the last twenty. Code that changed often changes again
    (`W_CHURN` in rust/tasks/rank.rs): the coupon module comes first; with `history` off, the
    demo does."""
    import subprocess

    repo = tmp_path / "repo"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       check=True, capture_output=True)

    coupon = 'def apply_coupon(cart, coupon):\n    """Apply the coupon to the cart total."""\n    return cart.total - coupon.amount\n'
    write(repo, "app/coupon.py", coupon)
    write(repo, "examples/coupon_demo.py", 'def coupon_demo(cart, coupon):\n    """Demo: a coupon applied twice to the '
          'cart total, applied once."""\n    print(cart.total - coupon.amount)\n')
    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "start")
    for i in range(30):
        coupon += f"\n# revision {i}\n"
        write(repo, "app/coupon.py", coupon)
        git("commit", "-qam", f"coupon step {i}")
    for i in range(20):
        write(repo, f"app/part_{i}.py", f"def part_{i}():\n    return {i}\n")
        git("add", ".")
        git("commit", "-qm", f"part {i}")

    def first(*args: str) -> str:
        return json.loads(run_cli("context", "the coupon is applied twice to the cart total", "--json", "--root",
                                  str(repo), *args, check=True).stdout)["files"][0]["path"]

    assert first() == "app/coupon.py"
    assert first("--signals-off", "history") == "examples/coupon_demo.py"


def test_a_first_file_far_ahead_of_the_next_is_shown_whole_when_it_fits(tmp_path):
    """Through the CLI: the task's words fill one small file and the next file says them
    once. The first file fits the budget and is well ahead, so its functions nothing in the task
    speaks for are offered above the floor by its lead (`focus::SURE`) and come before the next
    file's matching lines; at the floor, the next file's lines took the budget first."""
    repo = tmp_path / "repo"
    invoice = ('def settle_invoice(invoice):\n    """Settle the invoice: pay the invoice total."""\n'
               "    return pay(invoice.total)\n\n\n"
               + "".join(f"def helper_{i}(x):\n    return x.lines[{i}].price * x.lines[{i}].count\n\n\n"
                         for i in range(6)))
    write(repo, "billing/invoice.py", invoice)
    write(repo, "billing/ledger.py", "".join(f"def entry_{i}(x):\n    return x.entries[{i}]\n\n\n" for i in range(20))
          + 'def settle(ledger):\n    """Settle an invoice in the ledger."""\n    return ledger.close()\n')
    budget = -(-len(invoice.encode()) // 4) + 20
    answer = json.loads(run_cli("context", "settle the invoice total", "--budget", str(budget), "--json",
                                "--root", str(repo), check=True).stdout)
    assert [f["path"] for f in answer["files"]][:2] == ["billing/invoice.py", "billing/ledger.py"], answer["files"]
    shown = "".join(p["text"] for p in answer["bundle"] if p["path"] == "billing/invoice.py")
    assert all(f"def helper_{i}(x):" in shown for i in range(6)), answer["bundle"]


def test_the_file_whose_one_function_holds_the_task_s_words_is_listed_before_one_saying_them_apart(tmp_path):
    """Through the CLI: "refund the voucher when the parcel is lost" is about `settle_claim` in
    `shop/returns.py`, one function of thirteen that says each word once. `shop/claims.py` says
    them in four functions apart, two of them twice, and ranks above it by its words. Each
    listed file adds 0.3 × its best region's share of the task's words × (1 − that region's
    share of the file's words) (rust/tasks/meeting.rs): `returns.py` is listed first. Only the
    list's order moves: the bundle keeps the ranking's, `claims.py` first."""
    repo = tmp_path / "repo"

    def filler(name: str, a: int, n: int) -> str:
        return "".join(f"def {name}_{i}(x):\n    return x * {i} + {i}\n\n\n" for i in range(a, a + n))

    write(repo, "shop/claims.py", filler("step", 0, 3)
          + "def credit_back(order):\n    # refund the order; a refund goes to the card\n    return order.total\n\n\n"
          + filler("step", 3, 3)
          + "def track(item):\n    # the parcel's place; a parcel may be late\n    return item.where\n\n\n"
          + filler("step", 6, 3)
          + "def promo(code):\n    # a voucher code, checked once\n    return code.upper()\n\n\n"
          + filler("step", 9, 3)
          + "def missing(item):\n    # lost in transit, marked lost\n    return item.gone\n\n\n"
          + filler("step", 12, 3))
    write(repo, "shop/returns.py", filler("rule", 0, 6)
          + "def settle_claim(claim):\n    # refund the voucher when the parcel is lost\n    return claim.amount\n\n\n"
          + filler("rule", 6, 6))
    for name in ("auth", "log", "paths", "cart", "tax"):
        write(repo, f"shop/{name}.py", f"def load_{name}():\n    return None\n")
    answer = json.loads(run_cli("context", "refund the voucher when the parcel is lost", "--json", "--root", str(repo),
                                check=True).stdout)
    assert [f["path"] for f in answer["files"]][:2] == ["shop/returns.py", "shop/claims.py"], answer["files"]
    assert answer["files"][0]["regions"][0]["symbol"] == "settle_claim", answer["files"][0]
    assert answer["bundle"][0]["path"] == "shop/claims.py", answer["bundle"]


def test_a_task_that_names_a_part_of_the_tree_keeps_to_it(tmp_path):
    """Through the CLI, on a workspace of two packages that both say the task's words: the
    linter's file says them more, so "fix the import sorting of aliased names" ranks it
    first. "[fmt] fix the import sorting …" names the formatter's package
    (`crates/fmt_core`, a directory joined of `fmt`), and "fix(sorting): …" the module
    `sorting.rs`: the files outside count half, or three quarters where only a file's name
    says the part (rust/tasks/scope.rs), and the named one comes first. A kind of change
    (`docs:`) names no part, and neither does a scope no file is in."""
    repo = tmp_path / "repo"
    write(repo, "crates/lint_core/src/imports.rs",
          "// import sorting of aliased names: the import sorting rule\n"
          "fn check_import_sorting(names: &[Name]) { sort_aliased(names); sort_aliased(names) }\n"
          "fn sort_aliased(names: &[Name]) { /* aliased names, import sorting */ }\n")
    write(repo, "crates/fmt_core/src/sorting.rs",
          "// import sorting\nfn format_imports(names: &[Name]) { /* aliased */ }\n")
    for name in ("cache", "config", "diagnostics"):
        write(repo, f"crates/lint_core/src/{name}.rs", f"fn load_{name}() {{}}\n")

    def ranked(task: str) -> list[dict]:
        return json.loads(run_cli("context", task, "--json", "--root", str(repo), check=True).stdout)["files"]

    def first(task: str) -> str:
        return ranked(task)[0]["path"]

    plain = "fix the import sorting of aliased names"
    assert first(plain) == "crates/lint_core/src/imports.rs"
    assert first(f"[fmt] {plain}") == "crates/fmt_core/src/sorting.rs"
    assert first(f"fix(sorting): {plain}") == "crates/fmt_core/src/sorting.rs"
    for unnamed in (f"docs: {plain}", f"[parser] {plain}"):
        assert first(unnamed) == "crates/lint_core/src/imports.rs", unnamed
        assert not any("scope" in f["why"] for f in ranked(unnamed)), unnamed
    # The files kept say why; the rest do not.
    whys = {f["path"]: f["why"] for f in ranked(f"[fmt] {plain}")}
    assert "under a directory the task's scope `fmt` names" in whys["crates/fmt_core/src/sorting.rs"], whys
    assert "scope" not in whys["crates/lint_core/src/imports.rs"], whys
    whys = {f["path"]: f["why"] for f in ranked(f"fix(sorting): {plain}")}
    assert "named for the task's scope `sorting`" in whys["crates/fmt_core/src/sorting.rs"], whys
