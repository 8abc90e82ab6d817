# syntax=docker/dockerfile:1
# Card Arena: one image for every role. The entrypoint is `arena`; the role is
# the first argument (referee, worker, beat, web, ...), as in k8s/base:
#   docker build -t card-arena:dev .
#   docker run --rm card-arena:dev play goodge --players 4 --bots rules,random,random,random
ARG PYTHON_IMAGE=python:3.11-slim

# Build: install the project and its dependencies into a virtualenv.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/arena
WORKDIR /src
# .dockerignore lets in only what the package needs.
COPY . .
# The server install (no -e, no dev tools): `make smoke` checks that `arena` starts from the same.
RUN /opt/arena/bin/pip install --upgrade "pip>=23" \
 && /opt/arena/bin/pip install '.[server]'

# Run: the virtualenv only, as an unprivileged user.
FROM ${PYTHON_IMAGE}
ENV PATH=/opt/arena/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN groupadd --system --gid 10001 arena \
 && useradd --system --uid 10001 --gid arena --home-dir /home/arena --create-home \
    --shell /usr/sbin/nologin arena
COPY --from=build /opt/arena /opt/arena
# Numeric, so that Kubernetes can check runAsNonRoot.
USER 10001:10001
WORKDIR /home/arena
# referee gRPC, referee metrics, worker metrics, web
EXPOSE 50051 9101 9102 8000
ENTRYPOINT ["arena"]
CMD ["--help"]
