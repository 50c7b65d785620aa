# Tools/realworld/venv.mk: the project-local Python for the real world and its outside checkers.
# Included from the Makefile. `make venv` makes .venv (git-ignored) with the Debian python3 and
# installs requirements.txt; it does nothing when .venv already holds exactly these requirements.

# Debian packages the real world needs: python3-venv for `python3 -m venv`, gdal-bin for the
# checker's `ogrinfo`, the Mesa EGL/GL libraries pymgl's MapLibre Native renders with
# (EGL_PLATFORM=surfaceless, no display), sqlite3 for the tests' own queries.
REALWORLD_APT := python3-venv gdal-bin libegl-mesa0 libgl1-mesa-dri sqlite3

REALWORLD_DIR := Tools/realworld
REALWORLD_REQUIREMENTS := $(REALWORLD_DIR)/requirements.txt
REALWORLD_VENV := .venv
REALWORLD_STAMP := $(REALWORLD_VENV)/.requirements.sha256
REALWORLD_PYTHON := $(REALWORLD_VENV)/bin/python

.PHONY: venv
venv:
	@want=$$(sha256sum $(REALWORLD_REQUIREMENTS) | cut -d' ' -f1); \
	if [ -x $(REALWORLD_PYTHON) ] && [ "$$(cat $(REALWORLD_STAMP) 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	echo "venv: installing $(REALWORLD_REQUIREMENTS) into $(REALWORLD_VENV)"; \
	[ -x $(REALWORLD_PYTHON) ] || /usr/bin/python3 -m venv $(REALWORLD_VENV) || exit 1; \
	rm -f $(REALWORLD_STAMP); \
	PIP_DISABLE_PIP_VERSION_CHECK=1 $(REALWORLD_PYTHON) -m pip install --quiet --no-input -r $(REALWORLD_REQUIREMENTS) || exit 1; \
	echo "$$want" > $(REALWORLD_STAMP)
