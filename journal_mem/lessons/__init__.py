"""`jmem write`: one lesson filed in the main checkout, with the live facts it probably
corrects.
"""
