#!/usr/bin/env bash
# Builds MongoDB Labs' Socialite (github.com/mongodb-labs/socialite) for `npm run bench:socialite`
# on today's Java: its sources say Java 5, which JDK 17 no longer compiles, and its Dropwizard 0.6
# needs JAXB, which left the JDK in Java 11. Neither change touches how it serves or stores.
# Usage: bench/socialite/build.sh [directory]   (default: ./.socialite); prints the jar's path.
# SOCIALITE_REPO names where to clone from (default GitHub; a local mirror on a closed network).
set -euo pipefail
dir="${1:-.socialite}"
if [ ! -d "$dir/.git" ]; then
  git clone --quiet "${SOCIALITE_REPO:-https://github.com/mongodb-labs/socialite.git}" "$dir"
fi
cd "$dir"
if ! grep -q '<artifactId>jaxb-api</artifactId>' pom.xml; then
  jaxb='<dependency><groupId>javax.xml.bind</groupId><artifactId>jaxb-api</artifactId><version>2.3.1</version></dependency>'
  jaxb+='<dependency><groupId>com.sun.xml.bind</groupId><artifactId>jaxb-impl</artifactId><version>2.3.9</version></dependency>'
  jaxb+='<dependency><groupId>javax.activation</groupId><artifactId>activation</artifactId><version>1.1.1</version></dependency>'
  # The first <dependencies> is the project's own list.
  sed -i "0,/<dependencies>/s||<dependencies>${jaxb}|" pom.xml
fi
mvn -q -B -DskipTests -Dmaven.compiler.source=8 -Dmaven.compiler.target=8 package >&2
echo "$(pwd)/target/socialite-0.0.1-SNAPSHOT.jar"
