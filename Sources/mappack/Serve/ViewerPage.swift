import Foundation

/// The page `mappack serve` shows at `/`: the map in MapLibre GL JS (served from `/maplibre-gl.js`)
/// with the style at `/style.json`, each region's box outlined and its name as an HTML marker
/// (symbol layers need glyphs, which are not available offline), and a legend for the ground's two
/// colours: where the image holds no tile and where it holds water. `window.mapIdle` turns true at the
/// map's first `idle` after the regions are drawn, for scripts that wait for a finished picture;
/// `window.map` is the map. Without MapLibre GL JS the page says how to get it.
enum ViewerPage {
    static func html(title: String, bounds: [Double], maplibre: Bool) -> Data {
        let title = HTMLReport.escape(title)
        guard maplibre else {
            return Data(
                """
                <!doctype html>
                <html><head><meta charset="utf-8"><title>\(title)</title></head>
                <body style="font: 16px sans-serif; margin: 2em">
                <h1>\(title)</h1>
                <p id="missing"><strong>MapLibre GL JS is not available</strong>, so no map can be drawn here.
                mappack serve reads it from the PyPI wheel <code>maplibre</code> in the project's <code>.venv</code>
                (run <code>make venv</code>), or from the folder given with <code>--maplibre-js DIR</code>
                (the one holding <code>maplibre-gl.js</code> and <code>maplibre-gl.css</code>).</p>
                <p>The data is served all the same: <a href="/tilejson.json">/tilejson.json</a>,
                <a href="/style.json">/style.json</a>, <a href="/regions.geojson">/regions.geojson</a>.</p>
                <script>window.mapIdle = false; window.mapMissing = true;</script>
                </body></html>

                """.utf8)
        }
        let box = bounds.map { String($0) }.joined(separator: ", ")
        return Data(
            """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>\(title)</title>
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="stylesheet" href="/maplibre-gl.css">
            <style>
            html, body, #map { margin: 0; width: 100%; height: 100%; }
            .region-name { font: bold 12px sans-serif; color: #111; background: rgba(255, 255, 255, 0.85);
              padding: 1px 5px; border-radius: 3px; white-space: nowrap; }
            #legend { position: absolute; left: 8px; bottom: 8px; font: 12px sans-serif; color: #111;
              background: rgba(255, 255, 255, 0.85); padding: 4px 6px; border-radius: 3px; }
            #legend span { display: inline-block; width: 10px; height: 10px; border: 1px solid #666; margin: 0 4px 0 8px; }
            </style></head>
            <body><div id="map"></div>
            <div id="legend"><span style="background: \(ServeDocuments.notInstalled); margin-left: 0"></span>not installed\
            <span style="background: \(ServeDocuments.water)"></span>water</div>
            <script src="/maplibre-gl.js"></script>
            <script>
            window.mapIdle = false;
            const map = new maplibregl.Map({
              container: "map", style: "/style.json", bounds: [\(box)], fitBoundsOptions: { padding: 40 },
              attributionControl: false, fadeDuration: 0
            });
            window.map = map;
            map.on("load", async () => {
              const regions = await (await fetch("/regions.geojson")).json();
              map.addSource("regions", { type: "geojson", data: regions });
              map.addLayer({ id: "region-outlines", type: "line", source: "regions",
                paint: { "line-color": "#222", "line-width": 1.5, "line-dasharray": [3, 2] } });
              for (const feature of regions.features) {
                const label = document.createElement("div");
                label.className = "region-name";
                label.textContent = feature.properties.name;
                new maplibregl.Marker({ element: label, anchor: "bottom" }).setLngLat(feature.properties.labelAt).addTo(map);
              }
              map.once("idle", () => { window.mapIdle = true; });
            });
            </script>
            </body></html>

            """.utf8)
    }
}
