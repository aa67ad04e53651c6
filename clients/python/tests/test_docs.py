"""The Python programs of docs/clients.md and its Chinese twin compile, and
import only what idforge_client has."""

import ast
import re
import unittest

import idforge_client

from .servers import conformance_dir


class DocsTest(unittest.TestCase):
    def test_examples_compile(self):
        docs = conformance_dir().parent.parent / "docs"
        for doc in (docs / "clients.md", docs / "zh-CN" / "clients.md"):
            blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
            self.assertEqual(1, len(blocks), doc)
            tree = ast.parse(compile(blocks[0], str(doc), "exec", ast.PyCF_ONLY_AST))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "idforge_client":
                    for alias in node.names:
                        self.assertTrue(hasattr(idforge_client, alias.name), f"{doc}: idforge_client.{alias.name}")
