"""A stand-in origin for the edge-cache guide: answers every GET with a small HTML page.

Prints the port it listens on (127.0.0.1, chosen by the system) on its first line.
"""
import http.server


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"<!doctype html><title>{self.path}</title><p>rendered {self.path}</p>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
print(server.server_address[1], flush=True)
server.serve_forever()
