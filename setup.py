"""Build of the C search core only; everything else is configured in pyproject.toml."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "bots._search",
            sources=["bots/_search.c"],
            depends=["bots/_search_core.h", "bots/_search_level.h", "bots/_search_deepen.h", "bots/_search_module.h"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wno-unused-parameter", "-pthread"],
            extra_link_args=["-pthread"],
        )
    ]
)
