# Multi-stage build: compile in the Rust image, run in a small Debian image as a non-root user.
#   docker build -t pillarz:latest .
#   docker run -p 8080:8080 -e PILLARZ_LISTEN=0.0.0.0:8080 pillarz:latest serve
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY tests ./tests
COPY openapi ./openapi
RUN cargo build --release --locked --bin pillarz

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 pillarz \
 && useradd --system --uid 10001 --gid pillarz --no-create-home pillarz
COPY --from=build /src/target/release/pillarz /usr/local/bin/pillarz
USER 10001:10001
EXPOSE 8080
ENV PILLARZ_LISTEN=0.0.0.0:8080
ENTRYPOINT ["/usr/local/bin/pillarz"]
CMD ["serve"]
